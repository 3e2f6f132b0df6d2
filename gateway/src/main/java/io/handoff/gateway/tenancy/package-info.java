/**
 * Who is calling, whatever the transport: API keys mapped to tenants (and admin keys), resolved to a
 * {@link io.handoff.gateway.tenancy.Caller}. Sessions and idempotency keys are scoped to the tenant found here;
 * another tenant's session answers exactly like an unknown one. The transports' own adapters (a gRPC interceptor,
 * an HTTP filter) live with their fronts in {@code api}.
 */
package io.handoff.gateway.tenancy;
