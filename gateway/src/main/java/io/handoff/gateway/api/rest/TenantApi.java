package io.handoff.gateway.api.rest;

import jakarta.ws.rs.NameBinding;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks REST resources that act on a tenant's sessions: {@link TenantApiFilter} authenticates their callers and
 * turns admin keys away before anything else runs, the body included.
 */
@NameBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface TenantApi {
}
