// One session's thread socket, reconnecting when it drops: after 1 s, doubling to at most 10 s,
// back to 1 s once it is attached. A reconnection asks for what came after the last sequence
// it saw; devhostd answers with just that (`resumed`) or, when its log no longer has it all,
// a snapshot of every item, so the page rebuilds and nothing is lost or doubled.

export const FIRST_RETRY_MS = 1000;
export const MAX_RETRY_MS = 10000;

export class ChatConnection {
  /**
   * url(since): the socket's address, asking for what came after `since` (null: a snapshot).
   * handlers: onFrame(frame) for every server frame; onState({state, retryInMs, everOpened})
   * with state "connecting" | "open" | "retrying" | "closed" (the session closed: code 1000);
   * seq(): the last sequence the page applied, or null.
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.delay = FIRST_RETRY_MS;
    this.socket = null;
    this.timer = null;
    this.stopped = false;
    this.ready = false; // a snapshot arrived on the current socket
    this._open();
  }

  _open() {
    this.ready = false;
    this.handlers.onState({ state: "connecting" });
    const socket = new WebSocket(this.url(this.handlers.seq?.() ?? null));
    this.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
    };
    socket.onmessage = (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch {
        return; // never sent by devhostd
      }
      if (frame.type === "snapshot" || frame.type === "resumed") {
        this.ready = true;
        this.delay = FIRST_RETRY_MS;
        this.handlers.onState({ state: "open" });
      }
      this.handlers.onFrame(frame);
    };
    socket.onclose = (event) => {
      if (socket !== this.socket || this.stopped) return;
      this.socket = null;
      this.ready = false;
      if (event.code === 1000) {
        this.handlers.onState({ state: "closed" });
        return;
      }
      const retryInMs = this.delay;
      this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
      this.handlers.onState({ state: "retrying", retryInMs, everOpened: opened });
      this.timer = setTimeout(() => this._open(), retryInMs);
    };
  }

  /** Sends a command; false when there is no live socket (the caller keeps the draft). */
  send(command) {
    if (!this.ready || !this.socket || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(command));
    return true;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.socket) this.socket.close(1000);
    this.socket = null;
  }
}
