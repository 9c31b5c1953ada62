//! What the ORM test files share: the kind of the `ColumnError` each ORM carries in its
//! conversion errors. Each test file uses the one of its ORM.
#![allow(dead_code)] // each test target uses one of the two

use idkit_snowflake::idkit_core::column::{ColumnError, ColumnErrorKind};

/// The kind of the `ColumnError` Diesel carries, boxed, in a conversion error (for a row's
/// field, inside its `DeserializeFieldError`).
pub fn diesel_kind(err: &diesel::result::Error) -> Option<ColumnErrorKind> {
    let (diesel::result::Error::SerializationError(e)
    | diesel::result::Error::DeserializationError(e)) = err
    else {
        return None;
    };
    let mut cur: &(dyn std::error::Error + 'static) = &**e;
    loop {
        if let Some(c) = cur.downcast_ref::<ColumnError>() {
            return Some(c.kind());
        }
        cur = match cur.downcast_ref::<diesel::result::DeserializeFieldError>() {
            Some(field) => &*field.error,
            None => cur.source()?,
        };
    }
}

/// The kind of the `ColumnError` a failed SeaORM read carries.
pub fn sea_orm_kind(err: &sea_orm::DbErr) -> Option<ColumnErrorKind> {
    match err {
        sea_orm::DbErr::TryIntoErr { source, .. } => {
            source.downcast_ref::<ColumnError>().map(ColumnError::kind)
        }
        _ => None,
    }
}
