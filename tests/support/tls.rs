//! The mock served over HTTPS: a TLS server with a self-signed certificate made for the
//! test (rcgen) in front of a [`super::MockServer`], relaying each decrypted connection to
//! it. Nothing trusts the certificate unless a test hands it over.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A TLS front for a mock; dropping it stops accepting.
pub struct TlsFront {
    addr: SocketAddr,
    /// The certificate in PEM, for a client that should trust it.
    pub cert_pem: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl TlsFront {
    /// Serves TLS for `host` on a loopback port, relaying to `backend`.
    pub fn start(host: &str, backend: SocketAddr) -> TlsFront {
        Self::start_with_alpn(host, backend, Vec::new())
    }

    /// [`start`](Self::start) for an HTTP/2 backend (a gRPC server): the handshake
    /// settles on `h2`, as gRPC clients require.
    pub fn start_h2(host: &str, backend: SocketAddr) -> TlsFront {
        Self::start_with_alpn(host, backend, vec![b"h2".to_vec()])
    }

    fn start_with_alpn(host: &str, backend: SocketAddr, alpn: Vec<Vec<u8>>) -> TlsFront {
        let certified = rcgen::generate_simple_self_signed(vec![host.to_string()]).unwrap();
        let cert_pem = certified.cert.pem();
        let cert: CertificateDer<'static> = certified.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        config.alpn_protocols = alpn;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront {
            addr,
            cert_pem,
            runtime: Some(runtime),
        }
    }

    /// The loopback port TLS is served on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
