/**
 * The deployment under {@code deploy/} and the manifests the build generates, checked: the Kubernetes objects against
 * the API model, a mock API server and the packaged gateway started as their pod would start it; the Grafana
 * dashboard and the Prometheus alerts against the metrics a running gateway exports.
 */
package io.handoff.gateway.deploy;
