package io.handoff.gateway.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.handoff.gateway.session.SessionException;
import io.handoff.gateway.session.SessionFailure;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.stream.Collectors;

/**
 * Every failure of a REST call answers in the OpenAI error shape, never with Quarkus' default HTML or an empty
 * body: session refusals through {@link HttpStatuses}, an unreadable body as an invalid argument, whatever HTTP
 * itself refuses with its own status, and anything unexpected as a logged 500.
 */
public class RestExceptionMappers {

    private static final Logger LOG = Logger.getLogger(RestExceptionMappers.class);

    @ServerExceptionMapper
    public Response refused(SessionException refusal) {
        return refusal.retryAfter()
                .map(wait -> HttpStatuses.refusal(refusal.failure(), refusal.getMessage(), wait))
                .orElseGet(() -> HttpStatuses.refusal(refusal.failure(), refusal.getMessage(), (String) null));
    }

    /** Ahead of Quarkus' own mapper for this exception, whose body is not the OpenAI shape. */
    @ServerExceptionMapper(priority = Priorities.USER - 1)
    public Response mismatched(MismatchedInputException e) {
        return unreadableBody(e);
    }

    /** Quarkus wraps JSON syntax errors in a bare 400; the cause says what was wrong. */
    @ServerExceptionMapper
    public Response http(WebApplicationException e) {
        if (e.getCause() instanceof JsonProcessingException json) {
            return unreadableBody(json);
        }
        Response response = e.getResponse();
        if (response.hasEntity()) {
            return response;
        }
        return HttpStatuses.other(response.getStatus(), e.getMessage());
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e) {
        LOG.error("REST call failed unexpectedly", e);
        return HttpStatuses.other(500, "internal error");
    }

    /** Names the field at fault without echoing Jackson's messages, which speak of Java types. */
    private static Response unreadableBody(JsonProcessingException e) {
        String field = e instanceof JsonMappingException mapping ? path(mapping) : "";
        String message;
        if (e instanceof UnrecognizedPropertyException) {
            message = "unknown field '" + field + "'";
        } else if (e instanceof MismatchedInputException && !field.isEmpty()) {
            message = field + " has the wrong JSON type";
        } else if (e instanceof MismatchedInputException) {
            message = "the body must be a JSON object";
        } else if (e instanceof StreamReadException) {
            message = "the body is not valid JSON: " + e.getOriginalMessage();
        } else {
            message = "the body could not be read";
        }
        return HttpStatuses.refusal(SessionFailure.INVALID_ARGUMENT, message, field.isEmpty() ? null : field);
    }

    private static String path(JsonMappingException e) {
        return e.getPath().stream()
                .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining(".")).replace(".[", "[");
    }
}
