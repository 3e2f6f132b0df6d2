/** What the deployment can do and how it is doing: health checks (and, with routes, capabilities and load). */
package io.handoff.gateway.discovery;
