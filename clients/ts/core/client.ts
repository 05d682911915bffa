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

/** HeaderParams are header parameters: each may be left out or undefined (the client fills some). */
type HeaderParams<H> = { [K in keyof H]?: H[K] | undefined };

/** QueryParams are query parameters: an optional one may also be given as undefined (left out). */
type QueryParams<Q> = { [K in keyof Q]: {} extends Pick<Q, K> ? Q[K] | undefined : Q[K] };

/** Slot is one kind of parameters: absent, optional when none of them is required, or required. */
type Slot<Name extends string, V> = [V] extends [never]
  ? {}
  : {} extends V
    ? { [k in Name]?: V | undefined }
    : { [k in Name]: V };

/**
 * Params are an operation's `path`, `query` and `header` parameters (cookies are the browser's,
 * or the client's cookie jar's). Optional ones may be given as undefined, so a value that may be
 * missing (`xsrfToken()`) is passed as it is, even under exactOptionalPropertyTypes.
 */
export type Params<Op> = Op extends { parameters: infer Pa }
  ? (Pa extends { path: infer X } ? Slot<"path", X> : {}) &
      (Pa extends { query?: infer Q } ? Slot<"query", QueryParams<NonNullable<Q>>> : {}) &
      (Pa extends { header?: infer H } ? Slot<"header", HeaderParams<NonNullable<H>>> : {})
  : Record<string, never>;

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

/**
 * Media is the body type of one media type: what the spec says for JSON and text, a Blob for any
 * other (an image, a file), which the client reads as bytes, never as text (openapi-typescript
 * types a binary body as `string`; reading bytes as text corrupts them).
 */
type Media<K, V> = K extends `${string}json${string}` | `text/${string}` ? V : Blob;

/** Content is a response's body type; undefined when the response has none (204, 302). */
type Content<R> = R extends { content: infer C } ? { [K in keyof C]: Media<K, C[K]> }[keyof C] : undefined;

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

/**
 * ClientOptions configure a client of any surface, the same way on each; the RequestInit fields
 * (credentials, mode, headers, ...) go with every call.
 */
export type ClientOptions = Omit<RequestInit, "body" | "method"> & {
  /** baseUrl is where the API is, e.g. `https://api.example.com`; paths are appended to it. */
  baseUrl: string;
  /** fetch replaces the global fetch (tests, retries, logging); it receives a Request. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * token is the credential every call carries, as the surface takes it (orders and brands:
   * `Authorization: Bearer`; auth: `X-JWT`). A function is asked before each call, so a client
   * made before login uses the token once there is one.
   */
  token?: string | (() => string | undefined) | undefined;
  /**
   * cookies keeps the cookies the server sets and sends them back, for clients without a
   * browser's cookie store (Node, Deno, workers); in a browser use `credentials: "include"`.
   */
  cookies?: CookieJar | undefined;
};

/**
 * CookieJar holds the cookies of one API (a host): what its responses set, sent back with every
 * call of the clients sharing the jar. Paths, domains and expiry dates are not tracked; a cookie
 * the server clears (Max-Age=0 or an expiry in the past) is dropped.
 */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** get returns a cookie's value, or undefined. */
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  /**
   * store keeps the cookies a response sets. A Set-Cookie line that joins several cookies with
   * commas (as proxies and a Prism mock send them) counts as each of them; a comma inside an
   * Expires date does not split.
   */
  store(response: Response): void {
    for (const line of response.headers.getSetCookie().flatMap((l) => l.split(/,\s*(?=[^;,=\s]+=)/))) {
      const [pair = "", ...attrs] = line.split(";");
      const i = pair.indexOf("=");
      if (i <= 0) {
        continue;
      }
      const name = pair.slice(0, i).trim();
      const cleared = attrs.some((a) => {
        const [k = "", v = ""] = a.split("=").map((x) => x.trim());
        return (k.toLowerCase() === "max-age" && Number(v) <= 0) || (k.toLowerCase() === "expires" && Date.parse(v) < Date.now());
      });
      if (cleared) {
        this.#cookies.delete(name);
      } else {
        this.#cookies.set(name, pair.slice(i + 1).trim());
      }
    }
  }

  /** header is the Cookie header of every cookie held, "" when there is none. */
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/**
 * xsrfToken returns the XSRF-TOKEN cookie's value from cookies (in a browser, `document.cookie`,
 * the default), or undefined when there is none. Cookies ignore ports, so a page on another port
 * of the API's host reads the API's cookie.
 */
export function xsrfToken(cookies: string = (globalThis as { document?: { cookie: string } }).document?.cookie ?? ""): string | undefined {
  for (const pair of cookies.split(";")) {
    const i = pair.indexOf("=");
    if (i > 0 && pair.slice(0, i).trim() === "XSRF-TOKEN") {
      return decodeURIComponent(pair.slice(i + 1).trim());
    }
  }
  return undefined;
}

const FORM_TYPE = "application/x-www-form-urlencoded";

/** FormOnly is true for an operation whose body is a form and nothing else. */
type FormOnly<Op> = Op extends { requestBody?: { content: infer C } }
  ? [C] extends [never]
    ? false
    : typeof FORM_TYPE extends keyof C
    ? keyof C extends typeof FORM_TYPE
      ? true
      : false
    : false
  : false;

/** FormMethods are the methods of a path item whose body is only a form. */
type FormMethods<Item> = {
  [M in HttpMethod]: Item extends { [m in M]: infer Op } ? (FormOnly<Op> extends true ? M : never) : never;
}[HttpMethod];

/**
 * FormRoutes lists, for a spec's paths P, every path with an operation whose body is only a form
 * (`application/x-www-form-urlencoded`), and its methods. A surface's table of this type is
 * written once and held to its spec by the compiler: a missing or extra path does not compile.
 */
export type FormRoutes<P> = { [K in keyof P as [FormMethods<P[K]>] extends [never] ? never : K]: readonly FormMethods<P[K]>[] };

/** Surface is what a surface's client knows of its spec beyond the types. */
export interface Surface<P> {
  /** credential is the header that carries a token on this surface. */
  credential: (token: string) => [name: string, value: string];
  /** forms are the operations whose body is sent as a form (FormRoutes holds it to the spec). */
  forms: FormRoutes<P>;
  /** xsrf echoes the XSRF-TOKEN cookie in X-XSRF-TOKEN (a double-submit cookie) when a call does not. */
  xsrf?: boolean;
  /**
   * anonymous are the paths whose operations the spec secures otherwise or not at all (`security:
   * []` or the OAuth client's own credentials): the token is never sent there.
   */
  anonymous?: readonly (keyof P & string)[];
}

/**
 * createClient returns a typed client of the API at options.baseUrl, sending tokens, bodies and
 * cookies as surface says.
 *
 * @example
 * const api = createClient<paths>({ baseUrl: "https://api.example.com", credentials: "include" }, surface);
 * const { data, error } = await api.GET("/orders/{id}", { params: { path: { id: 17 } } });
 */
export function createClient<P>(options: ClientOptions, surface: Surface<P>): Client<P> {
  const { baseUrl, fetch: send = (r: Request) => globalThis.fetch(r), headers: clientHeaders, token, cookies, ...clientInit } = options;
  const forms = surface.forms as Record<string, readonly string[] | undefined>;
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
    const credential = surface.anonymous?.includes(path as keyof P & string) ? undefined : typeof token === "function" ? token() : token;
    if (credential) {
      const [name, value] = surface.credential(credential);
      if (!headers.has(name)) {
        headers.set(name, value);
      }
    }
    if (cookies && !headers.has("Cookie") && cookies.header() !== "") {
      headers.set("Cookie", cookies.header());
    }
    if (surface.xsrf && !headers.has("X-XSRF-TOKEN")) {
      const xsrf = cookies?.get("XSRF-TOKEN") ?? xsrfToken();
      if (xsrf !== undefined) {
        headers.set("X-XSRF-TOKEN", xsrf);
      }
    }
    let payload: RequestInit["body"];
    if (body !== undefined) {
      // The spec says how a body goes: a form where the operation takes nothing else, JSON otherwise,
      // unless the call names its Content-Type.
      if (!headers.has("Content-Type") && forms[path]?.includes(method.toLowerCase())) {
        headers.set("Content-Type", FORM_TYPE);
      }
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
    cookies?.store(response);
    const parsed = await read(response, method);
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

/**
 * read parses a response body: JSON when it says so, text for text/*, a Blob of the exact bytes
 * for anything else (an avatar's image), undefined when empty or for HEAD.
 */
async function read(response: Response, method: string): Promise<unknown> {
  if (method === "HEAD" || response.status === 204 || response.status === 304 || response.headers.get("Content-Length") === "0") {
    return undefined;
  }
  const type = (response.headers.get("Content-Type") ?? "").toLowerCase();
  if (type !== "" && !type.includes("json") && !type.startsWith("text/")) {
    const blob = await response.blob();
    return blob.size === 0 ? undefined : blob;
  }
  const text = await response.text();
  if (text === "") {
    return undefined;
  }
  return type.includes("json") ? JSON.parse(text) : text;
}
