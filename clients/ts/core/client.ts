/**
 * The typed fetch client every surface of the SDK is built on. It has no runtime dependency: it
 * calls the platform's `fetch` (browsers, Node 20+, Deno, Bun, workers), and its types read the
 * `paths` interface that openapi-typescript generates from a spec (`<surface>/schema.d.ts`), so
 * the compiler checks each path, parameter, body and response against the spec.
 *
 * The calling convention is openapi-fetch's (`api.GET(path, { params, body })` answering
 * `{ data, error, response }`), so code written against either reads the same.
 *
 * @module
 */

/**
 * HeadersLike is anything the Headers constructor takes. Named here rather than as the DOM's
 * HeadersInit, which Node's type definitions do not declare, so the SDK type-checks in both.
 */
export type HeadersLike = ConstructorParameters<typeof Headers>[0];

/** HttpMethod is a method the specs use, as openapi-typescript spells it in `paths`. */
export type HttpMethod = "get" | "put" | "post" | "delete" | "patch" | "head";

/** PathsWith are the paths of P that have an operation for method M. */
export type PathsWith<P, M extends HttpMethod> = {
  [K in keyof P]: P[K] extends { [m in M]: object } ? K : never;
}[keyof P] &
  string;

/** Operation is the operation of P at path and method M. */
export type Operation<P, Path extends keyof P, M extends HttpMethod> = P[Path] extends { [m in M]: infer Op } ? Op : never;

/** Params are an operation's `path`, `query` and `header` parameters (cookies are the browser's job). */
export type Params<Op> = Op extends { parameters: infer Pa } ? Omit<Pa, "cookie"> : Record<string, never>;

/** Body is the request body an operation takes: any of its media types' schemas. */
export type Body<Op> = Op extends { requestBody?: infer RB } ? (RB extends { content: infer C } ? C[keyof C] : never) : never;

/** RequestOptions are what one call takes besides its path. */
export type RequestOptions<Op> = ({} extends Params<Op> ? { params?: Params<Op> } : { params: Params<Op> }) &
  ([Body<Op>] extends [never]
    ? { body?: never }
    : Op extends { requestBody: { content: object } }
      ? { body: Body<Op> }
      : { body?: Body<Op> }) &
  Omit<RequestInit, "body" | "method" | "headers"> & {
    /**
     * headers are added to the client's. A body is sent as JSON unless Content-Type says
     * `application/x-www-form-urlencoded`, in which case its fields become form fields.
     */
    headers?: HeadersLike;
  };

/** Responses are an operation's documented responses, by status. */
type Responses<Op> = Op extends { responses: infer R } ? R : never;

/** Content is a response's body type; undefined when the response has none (204, 302). */
type Content<R> = R extends { content: infer C } ? C[keyof C] : undefined;

/** Success are the statuses whose body is `data`; every other documented status is `error`. */
type Success = 200 | 201 | 202 | 203 | 204 | 206;

/** Data is the body of any documented success of an operation. */
export type Data<Op> = {
  [S in keyof Responses<Op>]: S extends Success ? Content<Responses<Op>[S]> : never;
}[keyof Responses<Op>];

/** ErrorBody is the body of any documented refusal of an operation (4xx, 5xx). */
export type ErrorBody<Op> = {
  [S in keyof Responses<Op>]: S extends Success ? never : Content<Responses<Op>[S]>;
}[keyof Responses<Op>];

/**
 * FetchResult is what a call answers: `data` on a 2xx, `error` otherwise (the parsed body of the
 * refusal, or undefined when it had none), and the raw `response` in both cases.
 */
export type FetchResult<Op> =
  | { data: Data<Op>; error?: never; response: Response }
  | { data?: never; error: ErrorBody<Op>; response: Response };

/** Init is the options argument of a call, optional when the operation needs nothing. */
type Init<Op> = {} extends RequestOptions<Op> ? [init?: RequestOptions<Op>] : [init: RequestOptions<Op>];

/** Method is one HTTP method of a client: a call on any path that has it. */
type Method<P, M extends HttpMethod> = <Path extends PathsWith<P, M>>(
  path: Path,
  ...init: Init<Operation<P, Path, M>>
) => Promise<FetchResult<Operation<P, Path, M>>>;

/** Client is a typed client of the API described by P (a generated `paths` interface). */
export interface Client<P> {
  GET: Method<P, "get">;
  PUT: Method<P, "put">;
  POST: Method<P, "post">;
  DELETE: Method<P, "delete">;
  PATCH: Method<P, "patch">;
  HEAD: Method<P, "head">;
}

/** ClientOptions configure a client; the RequestInit fields (credentials, mode, ...) go with every call. */
export type ClientOptions = Omit<RequestInit, "body" | "method"> & {
  /** baseUrl is where the API is, e.g. `https://api.example.com`; paths are appended to it. */
  baseUrl: string;
  /** fetch replaces the global fetch (tests, retries, logging); it receives a Request. */
  fetch?: (request: Request) => Promise<Response>;
};

const FORM_TYPE = "application/x-www-form-urlencoded";

/**
 * createClient returns a typed client of the API at options.baseUrl.
 *
 * @example
 * const api = createClient<paths>({ baseUrl: "https://api.example.com", credentials: "include" });
 * const { data, error } = await api.GET("/orders/{id}", { params: { path: { id: 17 } } });
 */
export function createClient<P>(options: ClientOptions): Client<P> {
  const { baseUrl, fetch: send = (r: Request) => globalThis.fetch(r), headers: clientHeaders, ...clientInit } = options;
  const base = baseUrl.replace(/\/+$/, "");

  async function call(method: string, path: string, init: Record<string, unknown> = {}): Promise<unknown> {
    const { params = {}, body, headers: callHeaders, ...callInit } = init as {
      params?: { path?: Record<string, unknown>; query?: Record<string, unknown>; header?: Record<string, unknown> };
      body?: unknown;
      headers?: HeadersLike;
    };
    const headers = new Headers(clientHeaders);
    new Headers(callHeaders).forEach((v, k) => headers.set(k, v));
    for (const [k, v] of Object.entries(params.header ?? {})) {
      if (v !== undefined && v !== null) {
        headers.set(k, String(v));
      }
    }
    let payload: RequestInit["body"];
    if (body !== undefined) {
      if ((headers.get("Content-Type") ?? "").startsWith(FORM_TYPE)) {
        payload = fields(body as Record<string, unknown>);
      } else {
        if (!headers.has("Content-Type")) {
          headers.set("Content-Type", "application/json");
        }
        payload = JSON.stringify(body);
      }
    }
    const request = new Request(base + expand(path, params.path ?? {}) + query(params.query ?? {}), {
      ...clientInit,
      ...callInit,
      method,
      headers,
      body: payload,
    });
    const response = await send(request);
    const parsed = await read(response);
    return response.ok ? { data: parsed, response } : { error: parsed, response };
  }

  const method =
    (m: string) =>
    (path: string, init?: Record<string, unknown>): Promise<unknown> =>
      call(m, path, init);
  return {
    GET: method("GET"),
    PUT: method("PUT"),
    POST: method("POST"),
    DELETE: method("DELETE"),
    PATCH: method("PATCH"),
    HEAD: method("HEAD"),
  } as Client<P>;
}

/** expand fills a path template's `{name}` segments from values, each percent-encoded. */
function expand(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined || v === null) {
      throw new TypeError(`path parameter ${name} of ${template} is missing`);
    }
    return encodeURIComponent(String(v));
  });
}

/** query renders query parameters (arrays repeat the name, undefined is left out) with its `?`. */
function query(values: Record<string, unknown>): string {
  const q = fields(values).toString();
  return q ? `?${q}` : "";
}

/** fields renders an object as form fields, the way both query strings and form bodies are sent. */
function fields(values: Record<string, unknown>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item !== undefined && item !== null) {
        out.append(k, String(item));
      }
    }
  }
  return out;
}

/** read parses a response body: JSON when it says so, text otherwise, undefined when empty. */
async function read(response: Response): Promise<unknown> {
  if (response.status === 204 || response.status === 304 || response.headers.get("Content-Length") === "0") {
    return undefined;
  }
  const text = await response.text();
  if (text === "") {
    return undefined;
  }
  return (response.headers.get("Content-Type") ?? "").includes("json") ? JSON.parse(text) : text;
}
