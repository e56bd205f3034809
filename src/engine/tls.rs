//! TLS to a daemon (bollard's rustls client) and, when it fails, one line that names the file to fix.

use super::endpoint::TlsFiles;
use bollard::Docker;
use std::path::Path;

/// The files a docker TLS directory holds.
pub(crate) const CERT_FILES: &str = "ca.pem, cert.pem and key.pem";

/// A bollard client for `host` over TLS with `t`'s files; the error is the cause, naming the file.
pub(crate) fn client(host: &str, t: &TlsFiles, timeout_s: u64) -> Result<Docker, String> {
    if !t.verify {
        return Err("TLS without verifying the daemon (DOCKER_TLS without DOCKER_TLS_VERIFY, or a context's SkipTLSVerify) is not supported: give the daemon's CA as ca.pem and set DOCKER_TLS_VERIFY=1".into());
    }
    if let Some(ca) = t.ca.as_deref().filter(|ca| !ca.exists()) {
        return Err(format!(
            "the CA certificate {} does not exist (DOCKER_CERT_PATH names the directory with {CERT_FILES})",
            ca.display()
        ));
    }
    // Without both files the CLI goes on without a client certificate (a daemon may not ask for one); one alone is
    // a mistake worth naming.
    match (t.cert.exists(), t.key.exists()) {
        (true, false) => return Err(format!("the client key {} does not exist", t.key.display())),
        (false, true) => {
            return Err(format!(
                "the client certificate {} does not exist",
                t.cert.display()
            ))
        }
        _ => {}
    }
    // A context without ca.pem trusts the system's roots, as the CLI does; bollard wants a CA file, and an empty
    // one adds no CA to those roots.
    let ca = t.ca.as_deref().unwrap_or(Path::new("/dev/null"));
    Docker::connect_with_ssl(
        host,
        &t.key,
        &t.cert,
        ca,
        timeout_s,
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(|e| match e {
        bollard::errors::Error::CertPathError { path } => {
            format!("cannot read {}", path.display())
        }
        bollard::errors::Error::CertParseError { path } => {
            format!("{} holds no PEM certificate", path.display())
        }
        other => super::connect::describe(&other),
    })
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
