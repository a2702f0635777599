//! The web client: `GET /` serves its page and `GET /app/{file}` its scripts and style
//! sheet. Every asset is compiled into the binary (nothing is read from disk at run time),
//! served with its content type, a strict Content-Security-Policy, `Cache-Control:
//! no-cache` and an `ETag` (a hash of its bytes, computed once), so a browser revalidates
//! each load and gets `304 Not Modified` while the binary is unchanged. Browsers that accept
//! gzip get each asset gzipped, compressed once per process rather than per request.

use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use std::io::Write;

use actix_web::{web, HttpRequest, HttpResponse};
use flate2::write::GzEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};

/// The page's policy: scripts, styles and sockets from this origin only (no inline script),
/// images and media also from the `blob:` URLs the page builds for pulled media.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; connect-src 'self' ws: wss:; \
     img-src 'self' blob: data:; media-src 'self' blob:; style-src 'self'";

/// One embedded file of the web client.
struct Asset {
    /// Name under `/app/` (`index.html` is served at `/`).
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// Declares the embedded assets from `gateway/web/`.
macro_rules! assets {
    ($($name:literal => $content_type:expr),* $(,)?) => {
        &[$(Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!("../web/", $name)),
        }),*]
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file of the client. The page itself must stay first: `/` serves it.
static ASSETS: &[Asset] = assets![
    "index.html" => HTML,
    "style.css" => CSS,
    "app.js" => JS,
    "chats.js" => JS,
    "composer.js" => JS,
    "connection.js" => JS,
    "dialog.js" => JS,
    "dom.js" => JS,
    "media.js" => JS,
    "messages.js" => JS,
    "notify.js" => JS,
    "pairing.js" => JS,
    "pickers.js" => JS,
    "search.js" => JS,
    "store.js" => JS,
    "tools.js" => JS,
];

/// Registers `/` and `/app/{file}` (GET and HEAD).
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(page))
        .route("/", web::head().to(page))
        .route("/app/{file}", web::get().to(asset))
        .route("/app/{file}", web::head().to(asset));
}

async fn page(req: HttpRequest) -> HttpResponse {
    serve(&req, 0)
}

async fn asset(req: HttpRequest, file: web::Path<String>) -> HttpResponse {
    // The page is only served at `/`, so it has one URL and relative imports resolve
    // against `/app/`.
    match ASSETS.iter().skip(1).position(|a| a.name == file.as_str()) {
        Some(index) => serve(&req, index + 1),
        None => HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body("no such asset\n"),
    }
}

/// The quoted ETag of each asset, by position in [`ASSETS`].
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", &hex::encode(Sha256::digest(a.body))[..32]))
            .collect()
    })
}

/// Each asset gzipped, by position in [`ASSETS`] (the client is text: gzip sends about a
/// third of its bytes).
fn gzipped() -> &'static [Vec<u8>] {
    static GZIPPED: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    GZIPPED.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
                encoder
                    .write_all(a.body)
                    .and_then(|()| encoder.finish())
                    .expect("gzip into memory cannot fail")
            })
            .collect()
    })
}

/// True when the request's `Accept-Encoding` takes gzip (by name or `*`, without `q=0`).
fn accepts_gzip(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT_ENCODING)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// True when the request's `If-None-Match` names `etag` (or is `*`).
fn not_modified(req: &HttpRequest, etag: &str) -> bool {
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == etag || tag == "*")
}

fn serve(req: &HttpRequest, index: usize) -> HttpResponse {
    let asset = &ASSETS[index];
    let etag = &etags()[index];
    let unchanged = not_modified(req, etag);
    let mut response = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, etag.as_str()))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::VARY, "accept-encoding"));
    if unchanged {
        return response.finish();
    }
    response.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    ));
    if accepts_gzip(req) {
        return response
            .insert_header((header::CONTENT_ENCODING, "gzip"))
            .body(gzipped()[index].as_slice());
    }
    response.body(asset.body)
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::test as http_test;
    use actix_web::App;

    use super::*;

    fn url(asset: &Asset) -> String {
        if asset.name == "index.html" {
            "/".to_owned()
        } else {
            format!("/app/{}", asset.name)
        }
    }

    #[actix_web::test]
    async fn every_asset_is_served_with_its_type_and_headers_and_revalidates_to_304() {
        let app = http_test::init_service(App::new().configure(routes)).await;
        for asset in ASSETS {
            let response = http_test::call_service(
                &app,
                http_test::TestRequest::get().uri(&url(asset)).to_request(),
            )
            .await;
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.name);
            let headers = response.headers().clone();
            let get = |name| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
            };
            assert_eq!(
                get(header::CONTENT_TYPE),
                asset.content_type,
                "{}",
                asset.name
            );
            assert!(get(header::CONTENT_TYPE).contains("charset=utf-8"));
            assert_eq!(get(header::CACHE_CONTROL), "no-cache");
            assert_eq!(get(header::X_CONTENT_TYPE_OPTIONS), "nosniff");
            assert_eq!(
                get(header::CONTENT_SECURITY_POLICY),
                CONTENT_SECURITY_POLICY
            );
            let etag = get(header::ETAG).to_owned();
            assert!(etag.starts_with('"') && etag.len() > 2, "{}", asset.name);
            let body = http_test::read_body(response).await;
            assert_eq!(&body[..], asset.body, "{}", asset.name);

            let revalidation = http_test::TestRequest::get()
                .uri(&url(asset))
                .insert_header((header::IF_NONE_MATCH, etag.as_str()))
                .to_request();
            let response = http_test::call_service(&app, revalidation).await;
            assert_eq!(
                response.status(),
                StatusCode::NOT_MODIFIED,
                "{}",
                asset.name
            );
            assert_eq!(
                response
                    .headers()
                    .get(header::ETAG)
                    .unwrap()
                    .to_str()
                    .unwrap(),
                etag
            );
            assert!(http_test::read_body(response).await.is_empty());

            let stale = http_test::TestRequest::get()
                .uri(&url(asset))
                .insert_header((header::IF_NONE_MATCH, "\"something-else\""))
                .to_request();
            let response = http_test::call_service(&app, stale).await;
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.name);
        }
    }

    #[actix_web::test]
    async fn assets_are_sent_gzipped_to_a_browser_that_accepts_it() {
        let app = http_test::init_service(App::new().configure(routes)).await;
        for asset in ASSETS.iter().filter(|a| a.body.len() > 4096) {
            let request = http_test::TestRequest::get()
                .uri(&url(asset))
                .insert_header((header::ACCEPT_ENCODING, "gzip"))
                .to_request();
            let response = http_test::call_service(&app, request).await;
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.name);
            let encoding = response.headers().get(header::CONTENT_ENCODING).cloned();
            assert_eq!(
                encoding.as_ref().and_then(|v| v.to_str().ok()),
                Some("gzip")
            );
            let body = http_test::read_body(response).await;
            assert!(
                body.len() * 2 < asset.body.len(),
                "{}: {} bytes gzipped from {}",
                asset.name,
                body.len(),
                asset.body.len()
            );
        }
    }

    #[actix_web::test]
    async fn unknown_assets_are_not_found_and_the_page_has_one_url() {
        let app = http_test::init_service(App::new().configure(routes)).await;
        for uri in ["/app/nope.js", "/app/index.html", "/app/..%2Fsrc%2Fweb.rs"] {
            let response =
                http_test::call_service(&app, http_test::TestRequest::get().uri(uri).to_request())
                    .await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{uri}");
        }
    }

    #[test]
    fn the_page_loads_only_module_scripts_from_app() {
        let page = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert_eq!(ASSETS[0].name, "index.html");
        assert!(page.contains(r#"<script type="module" src="/app/app.js">"#));
        // The policy forbids inline script, so the page must not carry any.
        assert_eq!(page.matches("<script").count(), 1);
    }

    #[test]
    fn every_file_of_the_client_is_embedded_and_every_import_is_one_of_them() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.name.to_owned()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "gateway/web/ and ASSETS differ");
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            let text = std::str::from_utf8(asset.body).unwrap();
            for import in text.split("from './").skip(1) {
                let name = import.split('\'').next().unwrap();
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "{} imports {name}, which is not served",
                    asset.name
                );
            }
        }
    }

    #[test]
    fn the_client_stays_small() {
        let total: usize = ASSETS.iter().map(|a| a.body.len()).sum();
        assert!(total < 96 * 1024, "the web client is {total} bytes");
    }
}
