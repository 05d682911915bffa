// @ts-check
// The orders API through the TypeScript SDK: register, log in with the password grant, and run an
// order from creation to payment, checking the money moved as the spec says.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createOrdersClient, passwordGrant } from "../orders/index.js";
import { baseUrl, checkedFetch, env, expected, refusal } from "./env.mjs";

const base = { baseUrl: baseUrl("orders"), fetch: checkedFetch };
const client = { clientId: env("TRIAD_ORDERS_CLIENT_ID"), clientSecret: env("TRIAD_ORDERS_CLIENT_SECRET") };

/**
 * signUp registers a user of the given role and returns a client logged in as that user.
 *
 * @param {string} username
 * @param {import("../orders/index.js").schemas["UserType"]} userType
 */
async function signUp(username, userType) {
  const anon = createOrdersClient(base);
  const password = `${username}-password`;
  const { data: user, response } = await anon.POST("/users", { body: { username, password, userType } });
  assert.equal(response.status, 201);
  assert.ok(user);
  const grant = await passwordGrant(anon, { ...client, username, password });
  assert.ok(grant.data, `token: ${grant.response.status}`);
  assert.equal(grant.data.token_type, "bearer");
  assert.ok(grant.data.expires_in > 0, "the grant says how long the token lives");
  return { user, api: createOrdersClient({ ...base, token: grant.data.access_token }) };
}

test("a customer places an order, a performer does it, the customer accepts and pays", async () => {
  const customer = await signUp("ts-customer", "Customer");
  const performer = await signUp("ts-performer", "Performer");
  assert.equal(Number(customer.user.balance), 500);
  // The mock answers every registration with the spec's example user (a customer, 500.00).
  assert.equal(Number(performer.user.balance), expected(300, 500));

  const created = await customer.api.POST("/orders", { body: { description: "Paint the fence", price: 100 } });
  assert.equal(created.response.status, 201);
  assert.ok(created.data);
  const id = created.data.id;
  assert.equal(created.data.status, "WAITING");

  // The Location of the create resolves for the customer.
  assert.equal(created.response.headers.get("Location"), `/orders/${id}`);
  const read = await customer.api.GET("/orders/{id}", { params: { path: { id } } });
  assert.equal(read.data?.id, id);

  const waiting = await performer.api.GET("/orders", { params: { query: { size: 100 } } });
  assert.ok(waiting.data?.content.some((o) => o.id === id), "the new order is offered to performers");

  const taken = await performer.api.PATCH("/orders/{id}/take", { params: { path: { id } } });
  assert.equal(taken.data?.status, "IN PROGRESS");
  assert.equal(taken.data?.performer?.id, expected(performer.user.id, 2));

  const held = await performer.api.GET("/orders/{id}", { params: { path: { id } } });
  assert.equal(held.data?.status, "IN PROGRESS");

  // The mock answers every move with the spec's one example of a moved order (IN PROGRESS).
  const passed = await performer.api.PATCH("/orders/{id}/pass", { params: { path: { id } } });
  assert.equal(passed.data?.status, expected("READY", "IN PROGRESS"));

  const accepted = await customer.api.PATCH("/orders/{id}/accept", { params: { path: { id } } });
  assert.equal(accepted.data?.status, expected("COMPLETED", "IN PROGRESS"));

  // The customer pays the price plus 5%, the performer receives the price (the mock: its example
  // user, bob with 312.50, whoever asks).
  const me = await customer.api.GET("/authenticated");
  assert.equal(Number(me.data?.balance), expected(395, 312.5));
  const them = await performer.api.GET("/authenticated");
  assert.equal(Number(them.data?.balance), expected(400, 312.5));

  // Accepting twice is refused with the documented error body, and moves no money.
  const again = await customer.api.PATCH("/orders/{id}/accept", { params: { path: { id } }, ...refusal(409) });
  assert.equal(again.response.status, 409);
  assert.equal(again.error?.code, "invalid_state");
  assert.equal(Number((await customer.api.GET("/authenticated")).data?.balance), expected(395, 312.5));

  // The mock's list is the spec's example page (order 17, WAITING).
  const mine = await customer.api.GET("/users/{id}/orders", { params: { path: { id: customer.user.id } } });
  assert.deepEqual(
    mine.data?.content.map((o) => [o.id, o.status]),
    expected([[id, "COMPLETED"]], [[17, "WAITING"]]),
  );
});

test("a wrong password gets the RFC 6749 invalid_grant error, typed", async () => {
  const anon = createOrdersClient(base);
  await anon.POST("/users", { body: { username: "ts-forgetful", password: "right-password", userType: "Customer" } });
  const grant = await passwordGrant(createOrdersClient({ ...base, ...refusal(400) }), { ...client, username: "ts-forgetful", password: "wrong-password" });
  assert.equal(grant.response.status, 400);
  assert.ok(grant.error && "error" in grant.error, "the refusal is the RFC 6749 body");
  assert.equal(grant.error.error, "invalid_grant");
});

test("one client logs in and then carries the token it got", async () => {
  /** @type {string | undefined} */
  let token;
  const api = createOrdersClient({ ...base, token: () => token });
  // Before login the client sends no Authorization header at all (the token function answers
  // undefined); the request is not made here, since Prism's contract proxy refuses it itself.
  await api.POST("/users", { body: { username: "ts-later", password: "ts-later-password", userType: "Performer" } });
  const grant = await passwordGrant(api, { ...client, username: "ts-later", password: "ts-later-password" });
  token = grant.data?.access_token;
  const me = await api.GET("/authenticated");
  assert.equal(me.data?.username, expected("ts-later", "bob"));
});

test("a customer cancels a waiting order, a performer hands one back, and an order beyond the balance is refused", async () => {
  const customer = await signUp("ts-canceller", "Customer");
  const performer = await signUp("ts-releaser", "Performer");

  // 500.00 cannot reserve 1000.00 + 50.00.
  const tooDear = await customer.api.POST("/orders", { body: { description: "Build a house", price: "1000" }, ...refusal(409) });
  assert.equal(tooDear.response.status, 409);
  assert.equal(tooDear.error?.code, "insufficient_funds");

  const first = await customer.api.POST("/orders", { body: { description: "Wash the car", price: "20.00" } });
  assert.ok(first.data);
  const cancelled = await customer.api.PATCH("/orders/{id}/cancel", { params: { path: { id: first.data.id } } });
  assert.equal(cancelled.data?.status, "CANCELLED");

  const second = await customer.api.POST("/orders", { body: { description: "Mow the lawn", price: "30.00" } });
  assert.ok(second.data);
  const id = second.data.id;
  assert.equal((await performer.api.PATCH("/orders/{id}/take", { params: { path: { id } } })).data?.status, "IN PROGRESS");
  const released = await performer.api.PATCH("/orders/{id}/release", { params: { path: { id } } });
  assert.equal(released.data?.status, "WAITING");
  assert.equal(released.data?.performer, undefined);
});

test("a customer rejects a ready order, its performer may not take it back, and a 0.09 order costs 0.10", async () => {
  const customer = await signUp("ts-rejecter", "Customer");
  const performer = await signUp("ts-rejected", "Performer");

  const order = await customer.api.POST("/orders", { body: { description: "Fix the tap", price: "0.09" } });
  assert.ok(order.data);
  const id = order.data.id;
  assert.equal((await performer.api.PATCH("/orders/{id}/take", { params: { path: { id } } })).data?.status, "IN PROGRESS");
  assert.equal((await performer.api.PATCH("/orders/{id}/pass", { params: { path: { id } } })).data?.status, expected("READY", "IN PROGRESS"));
  const rejected = await customer.api.PATCH("/orders/{id}/reject", { params: { path: { id } } });
  assert.equal(rejected.data?.status, "WAITING");
  assert.equal(rejected.data?.performer, undefined);
  const retake = await performer.api.PATCH("/orders/{id}/take", { params: { path: { id } }, ...refusal(409, "coolingDown") });
  assert.equal(retake.response.status, 409);
  assert.equal(retake.error?.code, "retake_cooldown");

  // Another performer does the work and the customer accepts: 0.09 + a commission of 0.01.
  const other = await signUp("ts-second-performer", "Performer");
  assert.equal((await other.api.PATCH("/orders/{id}/take", { params: { path: { id } } })).data?.status, "IN PROGRESS");
  assert.equal((await other.api.PATCH("/orders/{id}/pass", { params: { path: { id } } })).data?.status, expected("READY", "IN PROGRESS"));
  assert.equal((await customer.api.PATCH("/orders/{id}/accept", { params: { path: { id } } })).data?.status, expected("COMPLETED", "IN PROGRESS"));
  const me = await customer.api.GET("/authenticated");
  assert.equal(Number(me.data?.balance), expected(499.9, 312.5));
});
