/**
 * Typed client of the triad auth service, over the types openapi-typescript generates from
 * api/auth.yaml into ./schema.d.ts (`make sdk`).
 *
 * The session lives in cookies: in a browser create the client with `credentials: "include"`;
 * elsewhere (Node) give it a `cookies` jar. Either way the client echoes the XSRF-TOKEN cookie in
 * the `X-XSRF-TOKEN` header of every call (the double-submit check), unless the call sets it. A
 * token held some other way goes in the `token` option, sent as `X-JWT`.
 *
 * @example
 * const api = createAuthClient({ baseUrl: "http://localhost:8080", cookies: new CookieJar() });
 * await api.POST("/auth/{provider}/login", { params: { path: { provider: "local" } }, body: { user, passwd } });
 * const { data: me } = await api.GET("/auth/user");
 *
 * @module
 */
import { createClient, type Client, type ClientOptions, type Surface } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export { CookieJar, xsrfToken } from "../core/client.js";
export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (User, Status, ApiError, ...). */
export type schemas = components["schemas"];

/** AuthClient is a typed client of the auth service. */
export type AuthClient = Client<paths>;

/** surface is what the auth client knows of api/auth.yaml beyond its types. */
const surface: Surface<paths> = {
  credential: (token) => ["X-JWT", token],
  // The direct login takes JSON or a form; the compiler holds this (empty) list to the spec.
  forms: {},
  xsrf: true,
};

/** createAuthClient returns a client of the auth service at options.baseUrl. */
export function createAuthClient(options: ClientOptions): AuthClient {
  return createClient<paths>(options, surface);
}
