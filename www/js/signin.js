// Signing in to a remote tool server: the MCP authorization flow of the package's connect({auth}).
// The package finds the authorization server, registers this page (or uses what the server
// supports), builds the authorization URL with PKCE and state, checks the answer and keeps the
// tokens in the connection's memory only. This module is the user's part: a "Sign in" button
// opens the authorization URL in a popup (a click, so no popup blocker), the authorization server's
// own pages ask the user, and the callback page (oauth-callback.html) hands the URL it was sent
// back to through a BroadcastChannel of this origin. (The page is cross-origin isolated, so a
// popup that visited the authorization server has no opener to postMessage to; a
// BroadcastChannel reaches only same-origin pages.)
import { $, say } from "./dom.js";

/** The channel the callback page posts `{callbackUrl}` to. */
export const CALLBACK_CHANNEL = "megane-demo.oauth-callback";

/** The callback page beside this page: the redirect URI registered with authorization servers. */
export function callbackUrl() {
  return new URL("oauth-callback.html", location.href).href;
}

/** The `auth` option of connect() for `serverUrl`: no token storage (memory only). */
export function signInOptions(serverUrl) {
  return {
    redirectUri: callbackUrl(),
    clientMetadata: { client_name: "megane Builder demo page" },
    redirect: (authorizationUrl) => askToSignIn(serverUrl, authorizationUrl),
  };
}

/** Shows the Sign in panel; resolves to the callback URL, rejects when the user cancels. */
function askToSignIn(serverUrl, authorizationUrl) {
  const callback = new URL(callbackUrl());
  const channel = new BroadcastChannel(CALLBACK_CHANNEL);
  const panel = $("sign-in");
  say($("sign-in-message"), `${new URL(serverUrl).host} asks you to sign in at ${new URL(authorizationUrl).host}.`);
  panel.hidden = false;
  $("status").textContent = "Waiting for you to sign in…";
  return new Promise((resolve, reject) => {
    const done = () => {
      channel.close();
      panel.hidden = true;
      $("sign-in-open").onclick = null;
      $("sign-in-cancel").onclick = null;
    };
    channel.onmessage = ({ data }) => {
      let url = null;
      try { url = new URL(String(data?.callbackUrl)); } catch { return; }
      // Only this page's callback; the package checks state and issuer.
      if (url.origin !== callback.origin || url.pathname !== callback.pathname) return;
      done();
      resolve(url.href);
    };
    $("sign-in-open").onclick = () => {
      window.open(authorizationUrl, "megane-sign-in", "popup,width=520,height=700,noopener");
    };
    $("sign-in-cancel").onclick = () => {
      done();
      reject(new Error("cancelled"));
    };
  });
}
