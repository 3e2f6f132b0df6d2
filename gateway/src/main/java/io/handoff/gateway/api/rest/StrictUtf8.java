package io.handoff.gateway.api.rest;

import io.handoff.gateway.session.SessionException;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.ReaderInterceptor;
import jakarta.ws.rs.ext.ReaderInterceptorContext;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A {@link TenantApi} body must be UTF-8, strictly: Jackson's reader lets some ill-formed sequences through (an
 * encoded surrogate), which would then be stored as text the client never sent. The body is already in memory
 * when this runs (Quarkus REST reads it before deserializing), so checking it costs one pass over its bytes.
 */
@Provider
@TenantApi
public class StrictUtf8 implements ReaderInterceptor {

    @Override
    public Object aroundReadFrom(ReaderInterceptorContext context) throws IOException {
        byte[] body = context.getInputStream().readAllBytes();
        if (!isUtf8(body)) {
            throw SessionException.invalid("the body is not valid UTF-8");
        }
        context.setInputStream(new ByteArrayInputStream(body));
        return context.proceed();
    }

    /** Whether the bytes are well-formed UTF-8 (no overlong forms, no encoded surrogates, nothing cut short). */
    public static boolean isUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
