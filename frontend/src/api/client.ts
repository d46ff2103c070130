// The one client of the graph service. Every RPC of proto/graph_service.proto
// is a POST to ./api/<RpcName> (relative to the page, which the plugin serves
// at /data/plugin/graph_ascend/index.html) with the request message in
// protobuf's JSON mapping; the reply comes back in the same mapping. The
// method table, the message types and their JSON codecs are generated from
// the proto at build time (scripts/gen-proto.mjs), so they cannot drift.
import {
  type ConvertJob,
  ConvertState,
  type DeepPartial,
  type FileInfo,
  GraphServiceDefinition,
  LayoutNode,
  type OpenProgress,
  ViewReply,
} from "./gen/graph_service.js";

export * from "./gen/graph_service.js";
export * from "./gen/vis.js";
// Both generated modules define these; the service's win.
export { protobufPackage, protobufFileName, type MessageFns, type DeepPartial } from "./gen/graph_service.js";

type Methods = typeof GraphServiceDefinition.methods;
type StreamingMethod = "openFile" | "convertProgress";
export type UnaryMethod = Exclude<keyof Methods, StreamingMethod>;
type MessageOf<F> = F extends { fromJSON(object: unknown): infer T } ? T : never;
export type RequestOf<M extends keyof Methods> = MessageOf<Methods[M]["requestType"]>;
export type ReplyOf<M extends keyof Methods> = MessageOf<Methods[M]["responseType"]>;

/**
 * An error reply of the service ({"error": {"code", "message"}}) or a
 * transport failure. The message is for the user: the RPC that failed is in
 * `rpc`, not in the text.
 */
export class ApiError extends Error {
  constructor(
    readonly rpc: string,
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === "AbortError";
}

interface Codec {
  fromJSON(object: unknown): unknown;
  toJSON(message: never): unknown;
  fromPartial(object: never): unknown;
}

/** A request: any subset of the message's fields; the rest take their proto defaults. */
export type PartialRequest<M extends keyof Methods> = DeepPartial<RequestOf<M>>;

/**
 * What the user waits on now: the panes' layout (the first screen of a file, every expand), a node's
 * details and a search. Chromium opens at most 6 HTTP/1.1 connections to TensorBoard and queues the
 * requests past them in an order of its own; the side panels' requests of a file just opened (its
 * unmatched lists, checkpoints, match configs) may wait seconds on the service's reading of a big file,
 * and six of them would leave the first screen waiting behind them. So at most SIDE_REQUESTS unary
 * requests other than these are in flight; the rest wait here, in order. Streams (OpenFile,
 * ConvertProgress) are not held back either.
 */
const FOREGROUND_RPCS = new Set(["GetView", "Expand", "Collapse", "Reveal", "GetNodeDetail", "Search"]);
export const SIDE_REQUESTS = 3;

/**
 * Reads whose identical requests in flight share one HTTP request: the filter panel and the match panel
 * both list a new file's unmatched nodes, side by side, as it opens (on a big file both would hold a
 * slot while the service reads it).
 */
const SHARED_RPCS = new Set(["Filter"]);

/** A unary reply as read off the wire. */
interface Fetched {
  response: Response;
  text: string;
}

/** A shared request: its callers still waiting, and how to abort it when none is. */
interface SharedCall {
  promise: Promise<Fetched>;
  users: number;
  controller: AbortController;
}

/** At most `limit` holders at once; the others wait in order of arrival (or until their signal aborts). */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.used < this.limit) {
      this.used++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener("abort", abort);
        resolve();
      };
      const abort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason ?? new DOMException("aborted", "AbortError"));
      };
      this.waiting.push(go);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  /** Hands the slot to the first waiter, if any. */
  release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.used--;
  }
}

export class GraphApi {
  /** Requests in flight (or waiting for a slot), for the busy indicator. */
  inFlight = 0;
  /** The side panels' requests (all unary requests but the foreground ones). */
  private readonly side = new Slots(SIDE_REQUESTS);
  /** The SHARED_RPCS requests in flight, by method and body. */
  private readonly sharedCalls = new Map<string, SharedCall>();
  /** Called with the main-thread time spent parsing and decoding each reply (the frame-time bench reads it). */
  onDecode: ((rpc: string, ms: number, bytes: number) => void) | null = null;
  onBusyChange: (busy: boolean) => void = () => {};

  constructor(private readonly base = "./api/") {}

  /** Calls one unary RPC; rejects with ApiError on an error reply. */
  async call<M extends UnaryMethod>(method: M, request: PartialRequest<M>, signal?: AbortSignal): Promise<ReplyOf<M>> {
    const def = GraphServiceDefinition.methods[method];
    const codec = def.requestType as unknown as Codec;
    const body = JSON.stringify(codec.toJSON(codec.fromPartial(request as never) as never));
    const { response, text } = SHARED_RPCS.has(def.name)
      ? await this.shared(`${def.name}\n${body}`, (s) => this.fetchText(def.name, body, s), signal)
      : await this.fetchText(def.name, body, signal);
    const t0 = performance.now();
    const json = parseJson(def.name, response.status, text);
    throwIfError(def.name, response, json);
    const reply =
      def.responseType === ViewReply ? decodeViewReply(json) : (def.responseType as unknown as Codec).fromJSON(json);
    this.onDecode?.(def.name, performance.now() - t0, text.length);
    return reply as ReplyOf<M>;
  }

  /** Posts one unary request (a side panel's once it has a slot) and reads its whole reply. */
  private async fetchText(rpc: string, body: string, signal?: AbortSignal): Promise<Fetched> {
    const slots = FOREGROUND_RPCS.has(rpc) ? null : this.side;
    if (slots) {
      this.busy(+1);
      try {
        await slots.acquire(signal);
      } finally {
        this.busy(-1);
      }
    }
    try {
      const response = await this.post(rpc, body, signal);
      const text = await response.text(); // the connection is held until the body is read
      return { response, text };
    } finally {
      slots?.release();
    }
  }

  /**
   * `start`'s request, or the identical one in flight (`key`): each caller gets the reply or its own
   * abort; the request itself is aborted once every caller has aborted.
   */
  private async shared(
    key: string,
    start: (signal: AbortSignal) => Promise<Fetched>,
    signal?: AbortSignal,
  ): Promise<Fetched> {
    signal?.throwIfAborted();
    let call = this.sharedCalls.get(key);
    if (!call) {
      const controller = new AbortController();
      const created: SharedCall = { promise: start(controller.signal), users: 0, controller };
      const forget = () => {
        if (this.sharedCalls.get(key) === created) this.sharedCalls.delete(key);
      };
      created.promise.then(forget, forget);
      this.sharedCalls.set(key, created);
      call = created;
    }
    const mine = call;
    mine.users++;
    try {
      return await untilAborted(mine.promise, signal);
    } finally {
      if (--mine.users === 0) {
        // Nobody waits on it any more: a later caller starts afresh (aborting an answered request does nothing).
        if (this.sharedCalls.get(key) === mine) this.sharedCalls.delete(key);
        mine.controller.abort();
      }
    }
  }

  /**
   * Opens a file and reports each progress message. The reply body is a
   * stream of OpenProgress messages, one JSON object per line (docs/API.md);
   * "data: " prefixes of server-sent events are accepted too.
   */
  async openFile(
    request: PartialRequest<"openFile">,
    onProgress: (p: OpenProgress) => void,
    signal?: AbortSignal,
  ): Promise<FileInfo> {
    const def = GraphServiceDefinition.methods.openFile;
    let last: OpenProgress | undefined;
    await this.stream(
      "openFile",
      request,
      (json) => {
        last = def.responseType.fromJSON(json);
        onProgress(last);
      },
      signal,
    );
    const final = last as OpenProgress | undefined;
    if (!final || !final.done || !final.info) {
      throw new ApiError(def.name, 200, "INCOMPLETE", "the service stopped before the file was open");
    }
    return final.info;
  }

  /**
   * Watches a conversion (ConvertProgress): reports the job on every change
   * and resolves with its last state, which is final unless the stream was
   * cut (the plugin's deadline, a restart): the caller then watches again.
   */
  async convertProgress(
    request: PartialRequest<"convertProgress">,
    onJob: (job: ConvertJob) => void,
    signal?: AbortSignal,
  ): Promise<ConvertJob | undefined> {
    const def = GraphServiceDefinition.methods.convertProgress;
    let last: ConvertJob | undefined;
    const onMessage = (json: unknown) => {
      last = def.responseType.fromJSON(json);
      onJob(last);
    };
    // Watching lasts as long as the conversion: not a request the busy indicator waits for.
    await this.stream("convertProgress", request, onMessage, signal, false);
    return last;
  }

  /**
   * Calls a server-streaming RPC. The reply body is a stream of messages, one
   * JSON object per line (docs/API.md); "data: " prefixes of server-sent
   * events are accepted too. An error line or status rejects with ApiError.
   */
  private async stream<M extends StreamingMethod>(
    method: M,
    request: PartialRequest<M>,
    onMessage: (json: unknown) => void,
    signal?: AbortSignal,
    busy = true,
  ): Promise<void> {
    const def = GraphServiceDefinition.methods[method];
    const codec = def.requestType as unknown as Codec;
    const response = await this.post(
      def.name,
      JSON.stringify(codec.toJSON(codec.fromPartial(request as never) as never)),
      signal,
    );
    if (!response.ok || !response.body) {
      const text = await response.text();
      throwIfError(def.name, response, parseJson(def.name, response.status, text));
      throw new ApiError(def.name, response.status, "BAD_REPLY", "the service sent an empty reply");
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = "";
    const consume = (line: string) => {
      line = line.trim();
      if (line.startsWith("data:")) line = line.slice(5).trim();
      if (!line || line.startsWith(":") || line.startsWith("event:")) return;
      const json = parseJson(def.name, response.status, line);
      throwIfError(def.name, response, json);
      onMessage(json);
    };
    if (busy) this.busy(+1);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += value;
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          consume(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
      }
      consume(pending);
    } finally {
      if (busy) this.busy(-1);
    }
  }

  /** Whether a job has ended (done, failed or cancelled). */
  static finished(job: ConvertJob | undefined): boolean {
    return !!job && job.state !== ConvertState.CONVERT_QUEUED && job.state !== ConvertState.CONVERT_RUNNING;
  }

  private async post(rpc: string, body: string, signal?: AbortSignal): Promise<Response> {
    this.busy(+1);
    try {
      return await fetch(this.base + rpc, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
        signal,
        credentials: "same-origin",
      });
    } catch (e) {
      if (isAbort(e)) throw e;
      throw new ApiError(rpc, 0, "NETWORK", `no connection to TensorBoard (${(e as Error).message})`);
    } finally {
      this.busy(-1);
    }
  }

  private busy(delta: number) {
    const was = this.inFlight > 0;
    this.inFlight += delta;
    if (was !== this.inFlight > 0) this.onBusyChange(this.inFlight > 0);
  }
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (as fetch rejects). */
function untilAborted<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason ?? new DOMException("aborted", "AbortError"));
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", abort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", abort);
        reject(e);
      },
    );
  });
}

function parseJson(rpc: string, status: number, text: string): unknown {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(rpc, status, "BAD_REPLY", `the reply is not JSON (HTTP ${status})`);
  }
}

function throwIfError(rpc: string, response: Response, json: unknown) {
  const error = (json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error || !response.ok) {
    const code = String(error?.code ?? response.status);
    const message = String(error?.message ?? response.statusText ?? "error");
    throw new ApiError(rpc, response.status, code, message);
  }
}

const LAYOUT_KEYS = Object.keys(LayoutNode.fromJSON({})) as (keyof LayoutNode)[];

/**
 * ViewReply carries up to tens of thousands of nodes. The plugin prints
 * every field (docs/API.md, "JSON mapping"), so each parsed node already has
 * the LayoutNode shape except doubles sent as "NaN"/"Infinity"; those are
 * fixed in place instead of copying every node. A reply missing any field
 * takes the generic decoder.
 */
export function decodeViewReply(json: unknown): ViewReply {
  const raw = json as { nodes?: Record<string, unknown>[] };
  const nodes = raw.nodes;
  if (!Array.isArray(nodes) || nodes.some((n) => LAYOUT_KEYS.some((k) => n[k] === undefined))) {
    return ViewReply.fromJSON(json);
  }
  for (const n of nodes) if (typeof n.precisionIndex === "string") n.precisionIndex = Number(n.precisionIndex);
  const reply = ViewReply.fromJSON({ ...raw, nodes: [] });
  reply.nodes = nodes as unknown as LayoutNode[];
  return reply;
}
