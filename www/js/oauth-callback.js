// The callback page of sign-in (oauth-callback.html): hands the URL the authorization server sent
// the browser back to (code, state, iss) to the demo page over a same-origin BroadcastChannel, takes
// the code out of the address bar, and closes the popup.
import { CALLBACK_CHANNEL } from "./signin.js";

const callbackUrl = location.href;
history.replaceState(null, "", location.pathname);
const channel = new BroadcastChannel(CALLBACK_CHANNEL);
channel.postMessage({ callbackUrl });
channel.close();
document.getElementById("message").textContent = "Signed in: this window can be closed.";
window.close();
