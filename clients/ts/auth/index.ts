/**
 * Typed client of the triad auth service, over the types openapi-typescript generates from
 * api/auth.yaml into ./schema.d.ts (`make sdk`).
 *
 * In a browser the session lives in cookies: create the client with `credentials: "include"` so
 * the `JWT` and `XSRF-TOKEN` cookies are stored and sent, and echo the XSRF-TOKEN cookie in the
 * `X-XSRF-TOKEN` header of every call that needs the user (`xsrfToken()` reads it).
 *
 * @example
 * const api = createAuthClient({ baseUrl: "http://localhost:8080", credentials: "include" });
 * await api.POST("/auth/{provider}/login", { params: { path: { provider: "local" } }, body: { user, passwd } });
 * const { data: me } = await api.GET("/auth/user", { params: { header: { "X-XSRF-TOKEN": xsrfToken() } } });
 *
 * @module
 */
import { createClient, type Client, type ClientOptions } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (User, Status, ApiError, ...). */
export type schemas = components["schemas"];

/** AuthClient is a typed client of the auth service. */
export type AuthClient = Client<paths>;

/** createAuthClient returns a client of the auth service at options.baseUrl. */
export function createAuthClient(options: ClientOptions): AuthClient {
  return createClient<paths>(options);
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
