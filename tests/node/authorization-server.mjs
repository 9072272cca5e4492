// A real OAuth 2.1 / OpenID authorization server on loopback for the sign-in tests: `oidc-provider`
// (npm, certified OpenID Provider library) with its development login and consent pages, dynamic
// client registration, PKCE, RFC 9207 `iss`, and resource indicators (RFC 8707) that mint RFC 9068
// JWT access tokens for each protected MCP resource given here. Nothing of the protocol is ours:
// this file is only its configuration.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import Provider, { errors } from "oidc-provider";

/**
 * Starts the authorization server on a free loopback port. `resources` are the MCP server URLs it
 * issues tokens for (scope `scope`), `pageOrigin` the page that registers and signs in (its
 * registration requests need CORS, which oidc-provider leaves to the deployment).
 * Resolves to `{issuer, stop()}`.
 */
export async function startAuthorizationServer({ resources, pageOrigin, scope = "mcp:tools" }) {
  const port = 24000 + Math.floor(Math.random() * 4000);
  const issuer = `http://127.0.0.1:${port}`;
  const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...key, kid: "sign-in-test", use: "sig", alg: "RS256" }] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    // A browser client may call the token endpoint from its redirect URIs' origins (oidc-provider's
    // own default policy, spelled out).
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    pkce: { required: () => true },
    ttl: { AccessToken: 600, Grant: 3600, Interaction: 600, Session: 3600 },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!resources.includes(resource)) throw new errors.InvalidTarget();
          return { scope, audience: resource, accessTokenTTL: 600, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } };
        },
      },
    },
  });
  // Dynamic registration from the page: allowed for its origin only.
  provider.use(async (ctx, next) => {
    if (ctx.path === "/reg" && ctx.get("origin") === pageOrigin) {
      ctx.set("Access-Control-Allow-Origin", pageOrigin);
      if (ctx.method === "OPTIONS") {
        ctx.set("Access-Control-Allow-Methods", "POST");
        ctx.set("Access-Control-Allow-Headers", "content-type");
        ctx.status = 204;
        return;
      }
    }
    await next();
  });
  const server = provider.listen(port, "127.0.0.1");
  await new Promise((resolve, reject) => { server.once("listening", resolve); server.once("error", reject); });
  return { issuer, stop: () => new Promise((resolve) => server.close(resolve)) };
}
