package io.handoff.gateway.api.rest;

import io.handoff.gateway.api.openengine.OpenEngineKvOperations;
import io.handoff.gateway.session.SessionException;
import io.handoff.openengine.v1.GetKvSessionRequest;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * {@code /v1/kv-sessions}: OpenEngineKv over HTTP+JSON. Each method turns its JSON into the openengine.v1 request
 * the gRPC service would receive and hands it to the same operations; it decides nothing itself.
 *
 * <p>There is no {@code DELETE}: a released session is not gone (it answers GET as a tombstone, and its
 * idempotency key still returns it), which is not what DELETE promises.
 */
@Path("/v1/kv-sessions")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@TenantApi
@Tag(name = "KV sessions", description = "The OpenEngineKv session lifecycle: allocate, get, renew, release")
@SecurityScheme(securitySchemeName = "apiKey", type = SecuritySchemeType.HTTP, scheme = "bearer",
        description = "An API key as a bearer token (or in x-api-key); not required while handoff.auth.enabled=false")
@SecurityRequirement(name = "apiKey")
@APIResponse(responseCode = "401", description = "No valid API key", content = @Content(schema = @Schema(
        implementation = OpenAiError.class)))
@APIResponse(responseCode = "403", description = "An admin key: sessions belong to tenants", content = @Content(
        schema = @Schema(implementation = OpenAiError.class)))
@APIResponse(responseCode = "503", description = "The session store cannot be reached; nothing changed",
        content = @Content(schema = @Schema(implementation = OpenAiError.class)))
public class KvSessionResource {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final String PATH = "/v1/kv-sessions/";

    private final OpenEngineKvOperations operations;
    private final RequestTenant tenant;

    public KvSessionResource(OpenEngineKvOperations operations, RequestTenant tenant) {
        this.operations = operations;
        this.tenant = tenant;
    }

    @POST
    @Operation(summary = "Allocate a KV session before either leg")
    @APIResponse(responseCode = "201", description = "Created; Location names the new session",
            content = @Content(schema = @Schema(implementation = KvSessionJson.class)))
    @APIResponse(responseCode = "200", description = "An identical retry: the session this key already made")
    @APIResponse(responseCode = "400", description = "A missing or invalid field, or a lease above the maximum",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    @APIResponse(responseCode = "409", description = "The key was used for a different request, or the style or "
            + "disposition is not supported here", content = @Content(schema = @Schema(
            implementation = OpenAiError.class)))
    @APIResponse(responseCode = "429", description = "The tenant holds its maximum of live sessions",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    public Uni<RestResponse<KvSessionJson>> allocate(
            @Parameter(required = true, description = "Scoped to the tenant; retries with the same key and body "
                    + "return the same session") @HeaderParam(IDEMPOTENCY_KEY) String idempotencyKey,
            @Context HttpHeaders headers, AllocateKvSessionBody body) {
        if (idempotencyKey == null || idempotencyKey.isEmpty()) {
            throw SessionException.invalid("the " + IDEMPOTENCY_KEY + " header is required");
        }
        if (headers.getRequestHeader(IDEMPOTENCY_KEY).size() > 1) {
            throw SessionException.invalid("the " + IDEMPOTENCY_KEY + " header is repeated; a request has one key");
        }
        var request = (body == null ? AllocateKvSessionBody.EMPTY : body).toProto(idempotencyKey);
        return operations.allocate(tenant.get(), request).map(allocated -> {
            KvSessionJson session = KvSessionJson.of(allocated.session());
            return allocated.created()
                    ? RestResponse.ResponseBuilder.<KvSessionJson>create(RestResponse.Status.CREATED)
                            .header(HttpHeaders.LOCATION, PATH + session.id()).entity(session).build()
                    : RestResponse.ok(session);
        });
    }

    @GET
    @Path("{id}")
    @Operation(summary = "Get a session, live or tombstone")
    @APIResponse(responseCode = "200", description = "The session")
    @APIResponse(responseCode = "404", description = "Unknown, purged, malformed or another tenant's id",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    public Uni<KvSessionJson> get(@PathParam("id") String id) {
        return operations.get(tenant.get(), GetKvSessionRequest.newBuilder().setSessionId(id).build())
                .map(KvSessionJson::of);
    }

    @POST
    @Path("{id}/renew")
    @Operation(summary = "Extend a live session's lease from now")
    @APIResponse(responseCode = "200", description = "The renewed session; the epoch is unchanged")
    @APIResponse(responseCode = "400", description = "An invalid lease, or one above the maximum",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    @APIResponse(responseCode = "404", description = "Unknown, purged, malformed or another tenant's id",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    @APIResponse(responseCode = "409", description = "The session has ended or its lease ran out (not_live), or "
            + "expected_epoch is stale (stale_epoch)", content = @Content(schema = @Schema(
            implementation = OpenAiError.class)))
    public Uni<KvSessionJson> renew(@PathParam("id") String id,
            @RequestBody(required = false) RenewKvSessionBody body) {
        var request = (body == null ? RenewKvSessionBody.EMPTY : body).toProto(id);
        return operations.renew(tenant.get(), request).map(KvSessionJson::of);
    }

    @POST
    @Path("{id}/release")
    @Operation(summary = "End a live session as released; releasing an ended session changes nothing")
    @APIResponse(responseCode = "200", description = "The session now; already_terminal says a release was a retry")
    @APIResponse(responseCode = "400", description = "An unreadable body",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    @APIResponse(responseCode = "404", description = "Unknown, purged, malformed or another tenant's id",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    @APIResponse(responseCode = "409", description = "expected_epoch is stale for a live session",
            content = @Content(schema = @Schema(implementation = OpenAiError.class)))
    public Uni<ReleasedKvSessionJson> release(@PathParam("id") String id,
            @RequestBody(required = false) ReleaseKvSessionBody body) {
        var request = (body == null ? ReleaseKvSessionBody.EMPTY : body).toProto(id);
        return operations.release(tenant.get(), request).map(ReleasedKvSessionJson::of);
    }
}
