/**
 * Typed client of the triad orders API, over the types openapi-typescript generates from
 * api/orders.yaml into ./schema.d.ts (`make sdk`). Every path, parameter, body and response is
 * checked by the TypeScript compiler against the spec.
 *
 * @example
 * const anon = createOrdersClient({ baseUrl: "http://localhost:8080" });
 * const token = await passwordGrant(anon, { clientId, clientSecret, username, password });
 * const api = createOrdersClient({ baseUrl: "http://localhost:8080", token });
 * const { data: me } = await api.GET("/authenticated");
 *
 * @module
 */
import { createClient, type Client, type ClientOptions } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (Order, User, ApiError, ...). */
export type schemas = components["schemas"];

/** OrdersClient is a typed client of the orders API. */
export type OrdersClient = Client<paths>;

/** OrdersClientOptions are ClientOptions plus the bearer token every request carries. */
export type OrdersClientOptions = ClientOptions & { token?: string };

/**
 * createOrdersClient returns a client of the orders API at options.baseUrl. With options.token
 * every request carries it as `Authorization: Bearer <token>`.
 */
export function createOrdersClient({ token, headers, ...options }: OrdersClientOptions): OrdersClient {
  const h = new Headers(headers);
  if (token) {
    h.set("Authorization", `Bearer ${token}`);
  }
  return createClient<paths>({ ...options, headers: h });
}

/** Credentials are what the password grant sends: the user's and the OAuth client's. */
export interface Credentials {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
}

/**
 * passwordGrant obtains an access token with the OAuth 2.0 password grant at POST /oauth/token,
 * sending the user's and the client's credentials as form fields (RFC 6749 §4.3.2). It throws
 * with the RFC 6749 error code when the server refuses.
 */
export async function passwordGrant(client: OrdersClient, { clientId, clientSecret, username, password }: Credentials): Promise<string> {
  const { data, error, response } = await client.POST("/oauth/token", {
    body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username, password },
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
  });
  if (!data) {
    // The token endpoint refuses in the RFC 6749 shape; only an oversized body gets the ApiError shape.
    const reason = error && "error" in error ? `${error.error}: ${error.error_description ?? ""}` : error?.code;
    throw new Error(`token request refused: ${response.status} ${reason}`);
  }
  return data.access_token;
}
