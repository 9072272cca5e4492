// round_trip.mjs's messaging floor: answers each message at once with a transferred buffer of the
// size asked for, as the offline Worker answers a call with its result bytes.
self.onmessage = (e) => {
  const bytes = new Uint8Array(e.data.n);
  self.postMessage({ type: "result", id: e.data.id, bytes, progress: null }, [bytes.buffer]);
};
