/**
 * Who is calling: API keys mapped to tenants (and admin keys), established once per call. Sessions and
 * idempotency keys are scoped to the tenant found here; another tenant's session answers exactly like an
 * unknown one.
 */
package io.handoff.gateway.api.auth;
