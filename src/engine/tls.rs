//! TLS to a daemon (rustls, one handshake per connection and never a resumed session) and, when it fails, one line
//! that names the file to fix.

use super::endpoint::TlsFiles;
use super::fault::describe;
use bollard::{BollardRequest, Docker};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};
use std::path::Path;
use std::sync::Arc;

/// The files a docker TLS directory holds.
pub(crate) const CERT_FILES: &str = "ca.pem, cert.pem and key.pem";

/// A bollard client for `host` over TLS with `t`'s files; the error is the cause, naming the file.
///
/// bollard's own `connect_with_ssl` keeps rustls's session cache, so from the second connection on it offers to
/// resume; a TLS proxy that checks client certificates without a session id context (`socat openssl-listen:…,
/// verify=1`) then aborts the handshake. The docker CLI never resumes, so neither do we: the transport is our own
/// hyper client over a `ClientConfig` with resumption disabled.
pub(crate) fn client(host: &str, t: &TlsFiles, timeout_s: u64) -> Result<Docker, String> {
    let config = client_config(t)?;
    let mut http = HttpConnector::new();
    // The connector is given `https://` URIs; `enforce_http` would refuse them before TLS wraps the stream.
    http.enforce_http(false);
    let https = HttpsConnector::from((http, config));
    let mut builder = Client::builder(TokioExecutor::new());
    // As bollard's own clients: one connection per request, none kept idle.
    builder.pool_max_idle_per_host(0);
    let client = Arc::new(builder.build(https));
    let transport = move |req: BollardRequest| {
        let client = Arc::clone(&client);
        async move {
            client
                .request(req)
                .await
                .map_err(bollard::errors::Error::from)
        }
    };
    // This ensures docker-machine style addresses (`tcp://HOST:PORT`) reach hyper as `https://HOST:PORT`.
    let addr = host
        .strip_prefix("tcp://")
        .or_else(|| host.strip_prefix("https://"))
        .unwrap_or(host);
    Docker::connect_with_custom_transport(
        transport,
        Some(format!("https://{addr}")),
        timeout_s,
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(|e| describe(&e))
}

/// rustls's client configuration for `t`: the system's roots plus `ca.pem`, the client certificate when both of its
/// files exist, and no session resumption.
fn client_config(t: &TlsFiles) -> Result<ClientConfig, String> {
    if !t.verify {
        return Err("TLS without verifying the daemon (DOCKER_TLS without DOCKER_TLS_VERIFY, or a context's SkipTLSVerify) is not supported: give the daemon's CA as ca.pem and set DOCKER_TLS_VERIFY=1".into());
    }
    let roots = roots(t.ca.as_deref())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("no TLS version to offer: {e}"))?
        .with_root_certificates(roots);
    // Without both files the CLI goes on without a client certificate (a daemon may not ask for one); one alone is
    // a mistake worth naming.
    let mut config = match (t.cert.exists(), t.key.exists()) {
        (true, true) => {
            let (chain, key) = client_identity(t)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                format!(
                    "the client key {} does not belong to {} ({e})",
                    t.key.display(),
                    t.cert.display()
                )
            })?
        }
        (true, false) => return Err(format!("the client key {} does not exist", t.key.display())),
        (false, true) => {
            return Err(format!(
                "the client certificate {} does not exist",
                t.cert.display()
            ))
        }
        (false, false) => builder.with_no_client_auth(),
    };
    config.resumption = Resumption::disabled();
    Ok(config)
}

/// The system's roots and the certificates in `ca`; a context without ca.pem trusts the system's roots alone, as
/// the CLI does.
fn roots(ca: Option<&Path>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    // An unreadable file among the system's roots must not stop a daemon whose CA is given from being reached.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let Some(ca) = ca else { return Ok(roots) };
    if !ca.exists() {
        return Err(format!(
            "the CA certificate {} does not exist (DOCKER_CERT_PATH names the directory with {CERT_FILES})",
            ca.display()
        ));
    }
    let certs = pem_certificates(ca)?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", ca.display()));
    }
    roots.add_parsable_certificates(certs);
    Ok(roots)
}

/// The certificates in the PEM file `path`.
fn pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} holds no PEM certificate ({e})", path.display()))
}

/// The client certificate chain and its key.
fn client_identity(
    t: &TlsFiles,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let chain = pem_certificates(&t.cert)?;
    if chain.is_empty() {
        return Err(format!("{} holds no PEM certificate", t.cert.display()));
    }
    let pem = std::fs::read(&t.key).map_err(|e| format!("cannot read {}: {e}", t.key.display()))?;
    let key = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| format!("{} holds no PEM private key ({e})", t.key.display()))?;
    Ok((chain, key))
}

/// The TLS error somewhere in `e`'s chain: hyper and tokio-rustls wrap it in `io::Error`s, whose `source()` skips it.
fn rustls_error(e: &bollard::errors::Error) -> Option<&rustls::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = cur {
        if let Some(r) = x.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        // An io::Error may wrap another io::Error (hyper-rustls wraps tokio-rustls's), so look at the wrapped one next.
        cur = match x
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => x.source(),
        };
    }
    None
}

/// True when a daemon answered plain HTTP with dockerd's "Client sent an HTTP request to an HTTPS server."
pub(crate) fn is_http_to_https(e: &bollard::errors::Error) -> bool {
    matches!(e, bollard::errors::Error::DockerResponseServerError { status_code: 400, message }
        if message.contains("HTTP request to an HTTPS server"))
}

/// Why a TLS connection with `t`'s files failed, naming the file to fix; `None` when TLS is not the cause (nothing
/// listens, a timeout).
pub(crate) fn explain(t: &TlsFiles, e: &bollard::errors::Error) -> Option<String> {
    use rustls::{AlertDescription as A, CertificateError as C, Error as R};
    let ca = t.ca.as_deref().map_or_else(
        || "the system's roots (the context has no ca.pem)".to_string(),
        |p| p.display().to_string(),
    );
    let r = rustls_error(e)?;
    Some(match r {
        R::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            format!("the daemon's certificate is not signed by the CA in {ca} ({r})")
        }
        R::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            format!("the daemon's certificate has expired ({r})")
        }
        R::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            format!("the daemon's certificate does not name the host in DOCKER_HOST ({r})")
        }
        R::AlertReceived(
            alert @ (A::CertificateRequired
            | A::BadCertificate
            | A::CertificateExpired
            | A::CertificateUnknown
            | A::UnknownCA
            | A::UnsupportedCertificate),
        ) => client_certificate(t, *alert),
        R::InvalidMessage(_) => format!(
            "the endpoint does not speak TLS ({r}): unset DOCKER_TLS_VERIFY for a plain tcp:// daemon, or use its TLS port"
        ),
        other => format!("{other}"),
    })
}

/// The daemon refused our client certificate: say which file and why, as far as the file itself shows.
fn client_certificate(t: &TlsFiles, alert: rustls::AlertDescription) -> String {
    let cert = t.cert.display();
    let pem = match std::fs::read(&t.cert) {
        Ok(p) => p,
        Err(_) => {
            return format!(
                "the daemon requires a client certificate and {cert} does not exist (DOCKER_CERT_PATH names the directory with {CERT_FILES})"
            )
        }
    };
    let parsed = x509_parser::pem::parse_x509_pem(&pem).ok().map(|(_, p)| p);
    let Some(x509) = parsed.as_ref().and_then(|p| p.parse_x509().ok()) else {
        return format!(
            "the daemon refused the client certificate: {cert} holds no PEM certificate"
        );
    };
    let v = x509.validity();
    let now = x509_parser::time::ASN1Time::now();
    if v.not_after < now {
        return format!(
            "the daemon refused the client certificate {cert}: it expired on {}",
            v.not_after
        );
    }
    if v.not_before > now {
        return format!(
            "the daemon refused the client certificate {cert}: it is not valid before {}",
            v.not_before
        );
    }
    format!(
        "the daemon refused the client certificate {cert} ({alert:?}): is it signed by the CA the daemon trusts (dockerd --tlscacert), and is {} its key?",
        t.key.display()
    )
}
