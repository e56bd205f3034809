//! bollard's errors in words a person can act on.

/// One line for a bollard error, in words a person can act on.
pub(crate) fn describe(e: &bollard::errors::Error) -> String {
    use bollard::errors::Error as B;
    match e {
        B::DockerResponseServerError {
            status_code,
            message,
        } => format!("{message} (HTTP {status_code})"),
        B::SocketNotFoundError(p) => format!("{p} does not exist"),
        B::RequestTimeoutError => "the request timed out".into(),
        B::DockerStreamError { error } => error.trim().to_string(),
        other => {
            // hyper wraps the io error; its source chain says "Connection refused" or "Permission denied".
            let mut s = other.to_string();
            let mut src = std::error::Error::source(other);
            while let Some(x) = src {
                s = x.to_string();
                src = x.source();
            }
            s
        }
    }
}
