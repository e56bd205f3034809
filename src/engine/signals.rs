//! SIGINT and SIGTERM during a long engine operation (a build, a run): installed before the work starts so a
//! Ctrl-C during container creation is not lost, and turned into a [`StopSignal`] the caller cleans up after.

use crate::error::{Error, StopSignal};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The two signals rocmenv stops on, listened to from the moment this exists.
pub(crate) struct StopSignals {
    sigint: Signal,
    sigterm: Signal,
}

impl StopSignals {
    /// Starts listening; must run inside the engine's runtime.
    pub(crate) fn install() -> Result<Self, Error> {
        let listen =
            |kind| signal(kind).map_err(|e| Error::Engine(format!("cannot catch signals: {e}")));
        Ok(StopSignals {
            sigint: listen(SignalKind::interrupt())?,
            sigterm: listen(SignalKind::terminate())?,
        })
    }

    /// Waits for the next SIGINT or SIGTERM.
    pub(crate) async fn recv(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.sigint.recv() => StopSignal::Interrupt,
            _ = self.sigterm.recv() => StopSignal::Terminate,
        }
    }
}
