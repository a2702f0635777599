//! Revoking a token by its id: the id (`token list` shows it) names one hash in the
//! account's set of token hashes; that token is then revoked as if given in full.
//!
//! The id must be whole and exact: a prefix that happens to match is refused, so a typo
//! cannot revoke another device.

use redis::aio::ConnectionLike;

use super::{
    account_hashes, delete, disconnect, drop_from_account, id_of, TokenError, ACCOUNT_FIELD,
    TOKEN_ID_LEN,
};
use crate::keys;

/// `id` as stored: exactly [`TOKEN_ID_LEN`] hex digits, lower-cased.
pub fn parse_id(id: &str) -> Result<String, TokenError> {
    if id.len() == TOKEN_ID_LEN && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id.to_ascii_lowercase())
    } else {
        Err(TokenError::MalformedId(id.to_owned()))
    }
}

/// Revokes the token of `account` whose id is `id` and closes the live sessions paired
/// with it on every gateway node; `false` if the account has no token with that id.
pub async fn revoke_by_id_and_disconnect<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    id: &str,
) -> Result<bool, TokenError> {
    let id = parse_id(id)?;
    let matching: Vec<String> = account_hashes(conn, account)
        .await?
        .into_iter()
        .filter(|hash| id_of(hash) == id)
        .collect();
    let hash = match matching.as_slice() {
        [] => return Ok(false),
        [hash] => hash,
        _ => {
            return Err(TokenError::AmbiguousId {
                id,
                account: account.to_owned(),
                count: matching.len(),
            })
        }
    };
    let owner: Option<String> = redis::cmd("HGET")
        .arg(keys::token(hash))
        .arg(ACCOUNT_FIELD)
        .query_async(conn)
        .await?;
    if owner.as_deref() != Some(account) {
        // A hash left by a creation or revocation cut short: that token does not work.
        drop_from_account(conn, account, hash).await?;
        return Ok(false);
    }
    delete(conn, account, hash).await?;
    disconnect(conn, account, hash).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_twelve_hex_digits_in_any_case() {
        assert_eq!(parse_id("BA7816bf8f01").unwrap(), "ba7816bf8f01");
        for bad in [
            "",
            "ba7816bf8f0",
            "ba7816bf8f011",
            "ba7816bf8f0g",
            "../tokens/x",
        ] {
            assert!(
                matches!(parse_id(bad), Err(TokenError::MalformedId(_))),
                "{bad:?}"
            );
        }
    }
}
