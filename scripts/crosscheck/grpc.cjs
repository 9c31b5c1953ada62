// Calls `idkit serve`'s gRPC front door with gRPC's own JavaScript library (@grpc/grpc-js),
// reading the service from the repository's .proto (@grpc/proto-loader: no generated code,
// no protoc), and checks the ids it gets decode as their schemes say: Twitter's bit layout
// (time since its epoch, datacenter, worker, sequence), UUIDv7's version, variant and
// millisecond prefix, KSUID's seconds since its epoch. Run by scripts/crosscheck.sh.
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');

const [protoDir, address] = process.argv.slice(2);
const definition = loader.loadSync('idkit/v1/idkit.proto', {
    includeDirs: [protoDir], keepCase: true, longs: String, defaults: true, oneofs: true,
});
const idkit = grpc.loadPackageDefinition(definition).idkit.v1;
const client = new idkit.IdService(address, grpc.credentials.createInsecure());

let failed = 0;
function check(ok, what) {
    if (!ok) {
        failed += 1;
        console.log(`MISMATCH ${what}`);
    }
}
const call = (method, request) => new Promise((resolve, reject) =>
    client[method](request, (err, reply) => (err ? reject(err) : resolve(reply))));

const TWITTER_EPOCH = 1288834974657n;
function twitter(id) {
    const v = BigInt(id);
    return {
        ms: Number((v >> 22n) + TWITTER_EPOCH),
        datacenter: Number((v >> 17n) & 31n),
        worker: Number((v >> 12n) & 31n),
        sequence: Number(v & 4095n),
    };
}

async function main() {
    const started = Date.now();
    const schemes = await call('Schemes', {});
    const names = schemes.schemes.map((s) => s.name);
    check(JSON.stringify(names) === JSON.stringify(['snowflake-twitter', 'uuid-v7', 'ksuid']),
        `schemes ${names}`);

    // One Twitter id: its bits, and the server's own decoding of it, agree.
    const one = await call('Next', { scheme: 'twitter', text: true });
    check(one.text === one.id64, `text ${one.text} vs fixed64 ${one.id64}`);
    const bits = twitter(one.id64);
    check(bits.datacenter === 1 && bits.worker === 3, `fields ${JSON.stringify(bits)}`);
    check(Math.abs(bits.ms - started) < 60000, `time ${bits.ms} vs now ${started}`);
    const decoded = await call('Decode', { scheme: 'snowflake-twitter', id: one.text });
    check(Number(decoded.timestamp_ms) === bits.ms, `decode time ${decoded.timestamp_ms} vs ${bits.ms}`);
    check(decoded.fields.worker === '3' && decoded.fields.sequence === String(bits.sequence),
        `decode fields ${JSON.stringify(decoded.fields)}`);

    // A stream of 20,000 Twitter ids in chunks of 1,500: ordered, unique, well formed.
    const ids = [];
    await new Promise((resolve, reject) => {
        const stream = client.Stream({ scheme: 'snowflake-twitter', count: 20000, chunk_size: 1500 });
        stream.on('data', (chunk) => {
            check(chunk.id_width === 8, `width ${chunk.id_width}`);
            check(chunk.ids64.length <= 1500, `chunk of ${chunk.ids64.length}`);
            ids.push(...chunk.ids64.map(BigInt));
        });
        stream.on('end', resolve);
        stream.on('error', reject);
    });
    check(ids.length === 20000, `${ids.length} streamed ids`);
    for (let i = 1; i < ids.length; i += 1) {
        if (!(ids[i - 1] < ids[i])) {
            check(false, `stream not increasing at ${i}`);
            break;
        }
    }
    const last = twitter(ids[ids.length - 1].toString());
    check(last.worker === 3 && last.ms >= bits.ms, `last streamed id ${JSON.stringify(last)}`);

    // A batch of UUIDv7: 16 bytes each, version 7, RFC 9562 variant, ms prefix, text.
    const batch = await call('Batch', { scheme: 'uuid-v7', count: 500, text: true });
    check(batch.id_width === 16 && batch.ids.length === 500 * 16, `uuid batch ${batch.ids.length}`);
    let previous = '';
    for (let i = 0; i < 500; i += 1) {
        const b = batch.ids.subarray(i * 16, i * 16 + 16);
        const hex = Buffer.from(b).toString('hex');
        check(b[6] >> 4 === 7, `version ${b[6] >> 4}`);
        check((b[8] & 0xc0) === 0x80, `variant ${b[8]}`);
        const ms = parseInt(hex.slice(0, 12), 16);
        check(Math.abs(ms - started) < 60000, `uuid time ${ms}`);
        check(batch.text[i].replace(/-/g, '') === hex, `uuid text ${batch.text[i]} vs ${hex}`);
        check(hex > previous, `uuid order at ${i}`);
        previous = hex;
    }

    // KSUID: 20 bytes, the first 4 the seconds since 1400000000.
    const k = await call('Next', { scheme: 'ksuid', text: true });
    check(k.id_bytes.length === 20, `ksuid ${k.id_bytes.length} bytes`);
    const secs = k.id_bytes.readUInt32BE(0) + 1400000000;
    check(Math.abs(secs * 1000 - started) < 60000, `ksuid time ${secs}`);
    check(k.text.length === 27, `ksuid text ${k.text}`);

    // A bad count gets its status code.
    await call('Batch', { scheme: 'uuid-v7', count: 0 }).then(
        () => check(false, 'count 0 accepted'),
        (err) => check(err.code === grpc.status.INVALID_ARGUMENT, `count 0: ${err.code}`),
    );

    client.close();
    console.log(`grpc-js: ${ids.length + 500 + 3} ids read back, ${failed} mismatches`);
    process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
    console.log(`grpc-js call failed: ${e}`);
    process.exit(1);
});
