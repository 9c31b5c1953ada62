//! The gRPC door's connections, admitted under the same limits as the HTTP door's: each
//! takes one of the service's `max_connections` slots (shared by both doors) or is closed
//! at once, and each must finish its TLS handshake, when TLS is on, and send HTTP/2's
//! connection preface within `header_timeout_ms` of opening, or it is closed. Without
//! that, connections that never say a word would each hold a file descriptor for good,
//! until the process could accept nothing on either door.
//!
//! What passes is handed to tonic as an [`Admitted`] connection, which gives its slot back
//! when tonic drops it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use crate::Service;
use crate::metrics::Slot;

/// HTTP/2's connection preface, which a client sends before anything else (RFC 9113,
/// section 3.4): 24 bytes.
const PREFACE_LEN: usize = 24;

/// The connections of `listener` that pass the limits, as tonic takes them. Accepting
/// stops, and `listener` is closed, once tonic drops the stream (at shutdown).
pub(super) fn admitted(
    listener: TcpListener,
    service: &Service,
) -> ReceiverStream<Result<Admitted, std::convert::Infallible>> {
    let (tx, rx) = mpsc::channel(16);
    let connections = Arc::clone(&service.connections);
    let timeout = service.limits.header_timeout;
    let tls = service
        .tls
        .as_ref()
        .map(crate::security::Tls::grpc_acceptor);
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                stream = crate::accepted(&listener, "gRPC") => stream,
                () = tx.closed() => return,
            };
            let Some(slot) = connections.admit() else {
                continue;
            };
            // No Nagle: a reply of a few kilobytes would otherwise wait for the client's
            // delayed ACK (40 ms a batch here).
            let _ = stream.set_nodelay(true);
            let (tx, tls, connections) = (tx.clone(), tls.clone(), Arc::clone(&connections));
            tokio::spawn(async move {
                match tokio::time::timeout(timeout, opening(stream, tls.as_ref(), slot)).await {
                    Ok(Ok(admitted)) => {
                        let _ = tx.send(Ok(admitted)).await;
                    }
                    Ok(Err(Refused::Tls)) => {
                        connections.tls_failures.fetch_add(1, Relaxed);
                    }
                    Ok(Err(Refused::Closed)) => {}
                    Err(_) => {
                        connections.header_timeouts.fetch_add(1, Relaxed);
                    }
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

/// Why a connection was closed before tonic saw it.
enum Refused {
    /// Its TLS handshake failed (a plaintext client on the TLS port among them).
    Tls,
    /// It closed before its preface was complete.
    Closed,
}

/// The TLS handshake, when `tls`, and the preface read ahead.
async fn opening(
    stream: TcpStream,
    tls: Option<&TlsAcceptor>,
    slot: Slot,
) -> Result<Admitted, Refused> {
    let info = TcpConnectInfo {
        local_addr: stream.local_addr().ok(),
        remote_addr: stream.peer_addr().ok(),
    };
    let mut io: Box<dyn Transport> = match tls {
        None => Box::new(stream),
        Some(acceptor) => Box::new(acceptor.accept(stream).await.map_err(|_| Refused::Tls)?),
    };
    let mut preface = [0; PREFACE_LEN];
    io.read_exact(&mut preface)
        .await
        .map_err(|_| Refused::Closed)?;
    Ok(Admitted {
        io,
        preface,
        given: 0,
        info,
        _slot: slot,
    })
}

/// What a connection runs over: TCP, or TLS over TCP.
trait Transport: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Transport for T {}

/// A connection that passed the limits: its preface, read ahead, is read again first, and
/// its slot is freed when it is dropped.
pub(super) struct Admitted {
    io: Box<dyn Transport>,
    preface: [u8; PREFACE_LEN],
    /// How much of `preface` has been read again.
    given: usize,
    info: TcpConnectInfo,
    _slot: Slot,
}

impl Connected for Admitted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.info.clone()
    }
}

impl AsyncRead for Admitted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.given < PREFACE_LEN {
            let ahead = &this.preface[this.given..];
            let n = ahead.len().min(buf.remaining());
            buf.put_slice(&ahead[..n]);
            this.given += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Admitted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, data)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
