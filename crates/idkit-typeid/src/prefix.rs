//! The type prefix: up to 63 characters of `[a-z_]`, starting and ending with a letter.

use alloc::format;

use core::fmt;

use idkit_core::{InlineBytes, ParseError};

/// The longest prefix the spec allows.
pub const MAX_PREFIX: usize = 63;

/// A valid TypeID type prefix, stored inline (`Copy`, no allocation). Empty is valid: the
/// id is then written without a separator.
///
/// # Examples
///
/// ```
/// use idkit_typeid::Prefix;
/// assert_eq!(Prefix::new("user_account")?.as_str(), "user_account");
/// assert!(Prefix::new("User").is_err());
/// assert!(Prefix::new("_user").is_err());
/// # Ok::<(), idkit_typeid::idkit_core::ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Prefix(InlineBytes<MAX_PREFIX>);

impl Prefix {
    /// The empty prefix.
    pub const EMPTY: Self = Self(InlineBytes::EMPTY);

    /// Checks `text` against the spec's rule, `^([a-z]([a-z_]*[a-z])?)?$`, at most 63
    /// characters.
    ///
    /// # Errors
    ///
    /// [`ParseError`] naming the length, the character at fault, or the underscore at the
    /// start or end.
    pub fn new(text: &str) -> Result<Self, ParseError> {
        const EXPECTED: &str = "a type prefix of lower-case letters a-z and underscores";
        let found = text.chars().count();
        let too_long = || {
            ParseError::invalid(format!(
                "type prefix of {found} characters: at most {MAX_PREFIX}"
            ))
        };
        if found > MAX_PREFIX {
            return Err(too_long());
        }
        if let Some((index, ch)) = text
            .chars()
            .enumerate()
            .find(|(_, c)| !(c.is_ascii_lowercase() || *c == '_'))
        {
            return Err(ParseError::invalid_char(ch, index, EXPECTED));
        }
        if text.starts_with('_') || text.ends_with('_') {
            return Err(ParseError::invalid(
                "a type prefix must start and end with a letter a-z",
            ));
        }
        // ASCII only, checked above: as many bytes as characters.
        InlineBytes::new(text.as_bytes())
            .map(Self)
            .ok_or_else(too_long)
    }

    /// The prefix.
    pub fn as_str(&self) -> &str {
        // Only ASCII letters and underscores were stored.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The prefix's ASCII bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }

    /// True for the empty prefix.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its length in characters.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl Default for Prefix {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl fmt::Debug for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Prefix({:?})", self.as_str())
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
