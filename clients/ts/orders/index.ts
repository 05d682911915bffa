/**
 * Typed client of the triad orders API, over the types openapi-typescript generates from
 * api/orders.yaml into ./schema.d.ts (`make sdk`). Every path, parameter, body and response is
 * checked by the TypeScript compiler against the spec.
 *
 * @example
 * let token: string | undefined;
 * const api = createOrdersClient({ baseUrl: "http://localhost:8080", token: () => token });
 * const grant = await passwordGrant(api, { clientId, clientSecret, username, password });
 * if (grant.error) throw new Error(grant.error.error); // the RFC 6749 code: invalid_grant, ...
 * token = grant.data.access_token; // valid for grant.data.expires_in seconds
 * const { data: me } = await api.GET("/authenticated");
 *
 * @module
 */
import { createClient, type Client, type ClientOptions, type FetchResult, type Surface } from "../core/client.js";
import type { components, operations, paths } from "./schema.js";

export { CookieJar } from "../core/client.js";
export type { ClientOptions, FetchResult } from "../core/client.js";
export type { components, operations, paths };

/** schemas are the spec's component schemas (Order, User, ApiError, ...). */
export type schemas = components["schemas"];

/** OrdersClient is a typed client of the orders API. */
export type OrdersClient = Client<paths>;

/** surface is what the orders client knows of api/orders.yaml beyond its types. */
const surface: Surface<paths> = {
  credential: (token) => ["Authorization", `Bearer ${token}`],
  // The token request is a form (RFC 6749 §4.3.2); the compiler holds this list to the spec.
  forms: { "/oauth/token": ["post"] },
  // The token request authenticates the OAuth client (form fields or HTTP Basic), never a user's
  // bearer token: sending one there would hand it to whatever answers that path.
  anonymous: ["/oauth/token"],
};

/**
 * createOrdersClient returns a client of the orders API at options.baseUrl. With options.token
 * every request carries it as `Authorization: Bearer <token>`.
 */
export function createOrdersClient(options: ClientOptions): OrdersClient {
  return createClient<paths>(options, surface);
}

/** Credentials are what the password grant sends: the user's and the OAuth client's. */
export interface Credentials {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
}

/** TokenGrant is the answer of passwordGrant: the token response, or the typed refusal. */
export type TokenGrant = FetchResult<operations["issueToken"]>;

/**
 * passwordGrant asks POST /oauth/token for an access token with the OAuth 2.0 password grant
 * (RFC 6749 §4.3), the credentials as form fields. It answers like every call: `data` is the token
 * response (`access_token`, `token_type`, `expires_in` in seconds), `error` the refusal, in the RFC
 * 6749 §5.2 shape (`error`: invalid_grant, invalid_client, ...) or, for an oversized body, the
 * ApiError shape; `response.status` tells 400 from 429 (too many failed logins, with Retry-After).
 */
export function passwordGrant(client: OrdersClient, { clientId, clientSecret, username, password }: Credentials): Promise<TokenGrant> {
  return client.POST("/oauth/token", {
    body: { grant_type: "password", client_id: clientId, client_secret: clientSecret, username, password },
  });
}
