// One session's chat socket, reconnecting when it drops: after 1 s, doubling to at most 10 s,
// back to 1 s once a snapshot arrived. Every (re)connection starts with a snapshot that holds
// the whole history, so the page rebuilds from it and nothing is lost or doubled.

export const FIRST_RETRY_MS = 1000;
export const MAX_RETRY_MS = 10000;

export class ChatConnection {
  /**
   * handlers: onFrame(frame) for every server frame; onState({state, retryInMs, everOpened})
   * with state "connecting" | "open" | "retrying" | "closed" (the session closed: code 1000).
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
    const socket = new WebSocket(this.url);
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
      if (frame.type === "snapshot") {
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
