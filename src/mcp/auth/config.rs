//! What the host configures for the sign-in ([`AuthConfig`], [`EnterpriseIdp`]), what a flow
//! gives back ([`Registration`], [`Tokens`]: kept in the host's storage as JSON, never shown),
//! and the fixed values both use (limits, grant and token types).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Most authorization flows for one operation (the sign-in and one step-up): a server whose 403
/// `insufficient_scope` never ends does not open a third sign-in window.
pub const MAX_FLOWS_PER_OPERATION: u32 = 2;

/// Cap on one metadata, registration or token answer, in bytes.
pub const MAX_AUTH_BODY_BYTES: usize = 256 * 1024;

/// RFC 7523 §2.1: the JWT bearer grant type.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token endpoint auth method of a client that signs its assertions (RFC 7523 §2.2).
pub const PRIVATE_KEY_JWT: &str = "private_key_jwt";
/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// RFC 8693 token exchange grant type.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an identity assertion JWT authorization grant (SEP-990).
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Random bytes a flow needs (PKCE verifier: 32, `state`: 16), from the host's CSPRNG
/// (`crypto.getRandomValues` in the package).
pub const ENTROPY_BYTES: usize = 48;

/// How the host identifies this client to authorization servers.
#[derive(Clone, Default)]
pub struct AuthConfig {
    /// Where the authorization server sends the browser back (the page's callback URL).
    pub redirect_uri: String,
    /// A pre-registered client ID.
    pub client_id: Option<String>,
    /// Its secret, when it has one (a page usually cannot keep one).
    pub client_secret: Option<String>,
    /// The issuer the pre-registered ID belongs to (used with any issuer when absent).
    pub client_issuer: Option<String>,
    /// An HTTPS URL of this client's ID metadata document (used where servers support them).
    pub client_metadata_url: Option<String>,
    /// A workload identity JWT (RFC 7523 assertion) for servers without user sign-in.
    pub assertion: Option<String>,
    /// The host holds an ES256 (P-256) private key for the pre-registered `client_id`: the client
    /// authenticates with `private_key_jwt` (RFC 7523 §2.2) where the authorization server lists
    /// it. The key never enters the core: [`Step::Sign`](super::Step::Sign) asks the driver for a signature.
    pub client_key: bool,
    /// Enterprise-managed authorization (MCP extension, SEP-990): the user's identity at the
    /// enterprise identity provider, exchanged there for an identity assertion grant.
    pub enterprise: Option<EnterpriseIdp>,
    /// Client metadata for dynamic registration (RFC 7591 §2); `redirect_uris`, `grant_types`,
    /// `response_types`, `token_endpoint_auth_method` and `application_type` are filled in when absent.
    pub client_metadata: Option<Map<String, Value>>,
}

/// The enterprise identity provider of enterprise-managed authorization (SEP-990): where the
/// host's ID token is exchanged (RFC 8693) for an identity assertion JWT authorization grant
/// (ID-JAG) meant for the MCP server's authorization server, which then takes it with the
/// jwt-bearer grant (RFC 7523).
#[derive(Clone, Default)]
pub struct EnterpriseIdp {
    /// The identity provider's token endpoint (https, or http on loopback).
    pub token_endpoint: String,
    /// The user's ID token from that identity provider (a secret: redacted from every message).
    pub id_token: String,
    /// This client's ID at the identity provider, and its secret when it has one.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// A client identity at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The issuer it belongs to.
    pub issuer: String,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, if any.
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub auth_method: String,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens for one server, with what is needed to refresh them. Serialised (JSON) only into
/// storage the host passed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The bearer token.
    pub access_token: String,
    /// The refresh token, if granted.
    pub refresh_token: Option<String>,
    /// The scopes asked for (united on step-up).
    pub scopes: Vec<String>,
    /// The resource indicator they were issued for.
    pub resource: String,
    /// The token endpoint (for refresh).
    pub token_endpoint: String,
    /// The client they were issued to.
    pub client: Registration,
    /// Sender-constrained (`token_type` `DPoP`, RFC 9449): sent as `Authorization: DPoP …` with a
    /// proof of the connection's key, which lives only as long as the connection.
    #[serde(default)]
    pub dpop: bool,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .field("resource", &self.resource)
            .field("client", &self.client)
            .finish()
    }
}
