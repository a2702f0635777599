//! Device tokens (`iris:token:<sha256>`, a hash, and the account's set of token hashes
//! `iris:{a:A}:tokens`): creation, verification, revocation, listing.
//!
//! A token is shown once, at creation; Redis keeps only its SHA-256, so a copy of the
//! database does not hand out working tokens.
//!
//! The record is found by the token alone, so it cannot share the account's hash tag: the
//! two keys are in different Redis Cluster slots and are written one after the other,
//! ordered so that every working token is always listed (and so revocable): creation adds
//! the hash to the account's set before writing the record, revocation deletes the record
//! (the token stops working at once) before removing the hash. A hash left in the set
//! without a record by a crash in between is dropped by the next listing.
//!
//! A token is revoked by the token itself or by its id (the first hex digits of its
//! hash, not a secret: [`revoke_by_id_and_disconnect`]), so an operator never has to put
//! a token in a command line or a URL to take it back.

mod revocation;

pub use revocation::{parse_id, revoke_by_id_and_disconnect};

use redis::aio::ConnectionLike;
use sha2::{Digest, Sha256};

use crate::clock::now_ms;
use crate::keys::{self, is_valid_account, AccountKeys};
use crate::{delivery, devices, push};

/// Prefix that makes a token recognisable in logs and secret scanners.
const TOKEN_PREFIX: &str = "iris_";
/// Random bytes per token (192 bits).
const TOKEN_RANDOM_BYTES: usize = 24;
/// Hex digits of the hash shown as a token's id in listings.
pub const TOKEN_ID_LEN: usize = 12;

/// Field of a token's record: the account it pairs devices with.
const ACCOUNT_FIELD: &str = "account";
/// Field: the operator's label.
const NAME_FIELD: &str = "name";
/// Field: when the token was created, ms since the epoch.
const CREATED_MS_FIELD: &str = "created_ms";

/// Errors of the token store.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The account name cannot be used.
    #[error("invalid account name {0:?}: use 1-128 of A-Z a-z 0-9 . _ @ -")]
    InvalidAccount(String),
    /// Not a token id: [`TOKEN_ID_LEN`] hex digits.
    #[error("malformed token id {0:?}: a token id is {TOKEN_ID_LEN} hex digits, as `token list` shows it")]
    MalformedId(String),
    /// Several tokens of the account have this id (two hashes sharing their first digits).
    #[error("token id {id} names {count} tokens of account {account}: revoke by the token")]
    AmbiguousId {
        /// The id asked for.
        id: String,
        /// The account.
        account: String,
        /// How many tokens have it.
        count: usize,
    },
    /// Redis failed.
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
}

/// A stored token as listed (never the token itself).
#[derive(Debug, Clone)]
pub struct TokenInfo {
    /// Short id: the first hex digits of the token's hash.
    pub id: String,
    /// Operator's label.
    pub name: String,
    /// Creation time (ms since the epoch).
    pub created_ms: u64,
}

/// The hash a token is stored (and recognised in revocation notices) by.
pub fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The id a token with hash `token_hash` is listed by.
pub fn id_of(token_hash: &str) -> &str {
    &token_hash[..TOKEN_ID_LEN]
}

/// Creates a token for `account`; returns the token (shown once).
pub async fn create<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    name: &str,
) -> Result<String, TokenError> {
    if !is_valid_account(account) {
        return Err(TokenError::InvalidAccount(account.to_owned()));
    }
    let random: [u8; TOKEN_RANDOM_BYTES] = rand::random();
    let token = format!("{TOKEN_PREFIX}{}", hex::encode(random));
    let hash = digest(&token);
    redis::cmd("SADD")
        .arg(AccountKeys::new(account).tokens())
        .arg(&hash)
        .query_async::<()>(conn)
        .await?;
    redis::cmd("HSET")
        .arg(keys::token(&hash))
        .arg(ACCOUNT_FIELD)
        .arg(account)
        .arg(NAME_FIELD)
        .arg(name)
        .arg(CREATED_MS_FIELD)
        .arg(now_ms())
        .query_async::<()>(conn)
        .await?;
    Ok(token)
}

/// The account `token` belongs to, if it is a valid, unrevoked token.
pub async fn verify<C: ConnectionLike + Send>(
    conn: &mut C,
    token: &str,
) -> Result<Option<String>, TokenError> {
    if !token.starts_with(TOKEN_PREFIX) {
        return Ok(None);
    }
    Ok(redis::cmd("HGET")
        .arg(keys::token(&digest(token)))
        .arg(ACCOUNT_FIELD)
        .query_async(conn)
        .await?)
}

/// Whether `token` has the shape of a token this store creates (prefix, then hex); a
/// string that has not cannot be one, revoked or not.
pub fn is_well_formed(token: &str) -> bool {
    token.strip_prefix(TOKEN_PREFIX).is_some_and(|random| {
        random.len() == 2 * TOKEN_RANDOM_BYTES && random.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Revokes `token` and closes the live sessions paired with it on every gateway node;
/// returns the account it belonged to, or `None` if it was unknown.
pub async fn revoke_and_disconnect<C: ConnectionLike + Send>(
    conn: &mut C,
    token: &str,
) -> Result<Option<String>, TokenError> {
    let Some(account) = revoke(conn, token).await? else {
        return Ok(None);
    };
    disconnect(conn, &account, &digest(token)).await?;
    Ok(Some(account))
}

/// After the revocation of the token with hash `token_hash`: closes the live sessions
/// paired with it on every gateway node and forgets its devices' push targets.
async fn disconnect<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_hash: &str,
) -> Result<(), TokenError> {
    delivery::announce_revoked_token(conn, account, token_hash).await?;
    forget_push_targets(conn, account, id_of(token_hash)).await
}

/// Removes the push targets of the devices that paired with the token `token_id`: a
/// revoked device gets no more pushes.
async fn forget_push_targets<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_id: &str,
) -> Result<(), TokenError> {
    for (device_id, record) in devices::list(conn, account).await? {
        if record.token_id.as_deref() == Some(token_id) {
            push::remove_target(conn, account, &device_id).await?;
        }
    }
    Ok(())
}

/// Revokes `token`; returns the account it belonged to, or `None` if it was unknown.
pub async fn revoke<C: ConnectionLike + Send>(
    conn: &mut C,
    token: &str,
) -> Result<Option<String>, TokenError> {
    let Some(account) = verify(conn, token).await? else {
        return Ok(None);
    };
    delete(conn, &account, &digest(token)).await?;
    Ok(Some(account))
}

/// Deletes the record of the token with hash `token_hash` (it stops working at once), then
/// its hash from `account`'s set.
async fn delete<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_hash: &str,
) -> Result<(), TokenError> {
    redis::cmd("DEL")
        .arg(keys::token(token_hash))
        .query_async::<()>(conn)
        .await?;
    drop_from_account(conn, account, token_hash).await
}

/// Removes `token_hash` from `account`'s set of token hashes.
async fn drop_from_account<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
    token_hash: &str,
) -> Result<(), TokenError> {
    redis::cmd("SREM")
        .arg(AccountKeys::new(account).tokens())
        .arg(token_hash)
        .query_async::<()>(conn)
        .await?;
    Ok(())
}

/// The hashes in `account`'s set of tokens.
async fn account_hashes<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> Result<Vec<String>, TokenError> {
    if !is_valid_account(account) {
        return Err(TokenError::InvalidAccount(account.to_owned()));
    }
    Ok(redis::cmd("SMEMBERS")
        .arg(AccountKeys::new(account).tokens())
        .query_async(conn)
        .await?)
}

/// Tokens of `account`, oldest first.
pub async fn list<C: ConnectionLike + Send>(
    conn: &mut C,
    account: &str,
) -> Result<Vec<TokenInfo>, TokenError> {
    let hashes = account_hashes(conn, account).await?;
    // One round trip for every token's record, not one per token (on a Cluster, one per
    // slot, concurrently).
    let mut pipe = redis::pipe();
    for hash in &hashes {
        pipe.cmd("HMGET")
            .arg(keys::token(hash))
            .arg(NAME_FIELD)
            .arg(CREATED_MS_FIELD);
    }
    let records: Vec<(Option<String>, Option<u64>)> = if hashes.is_empty() {
        Vec::new()
    } else {
        pipe.query_async(conn).await?
    };
    let mut tokens = Vec::with_capacity(hashes.len());
    for (hash, (name, created_ms)) in hashes.iter().zip(records) {
        let Some(created_ms) = created_ms else {
            // Left by a creation or revocation cut short: the token never worked or no
            // longer does.
            redis::cmd("SREM")
                .arg(AccountKeys::new(account).tokens())
                .arg(hash)
                .query_async::<()>(conn)
                .await?;
            continue;
        };
        tokens.push(TokenInfo {
            id: id_of(hash).to_owned(),
            name: name.unwrap_or_default(),
            created_ms,
        });
    }
    tokens.sort_by_key(|token| token.created_ms);
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_known_by_their_sha256_and_listed_by_its_first_digits() {
        let hash = digest("abc");
        assert_eq!(
            hash,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(id_of(&hash), "ba7816bf8f01");
    }

    #[test]
    fn only_the_prefix_and_the_random_hex_make_a_well_formed_token() {
        let token = format!("{TOKEN_PREFIX}{}", "0a".repeat(TOKEN_RANDOM_BYTES));
        assert!(is_well_formed(&token));
        assert!(!is_well_formed(&token[..token.len() - 1]));
        assert!(!is_well_formed(&format!("{token}0")));
        assert!(!is_well_formed(&token.replace("iris_", "aris_")));
        assert!(!is_well_formed(&token.replace('a', "g")));
        assert!(!is_well_formed(""));
    }
}
