package io.handoff.gateway.testing;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.LinkedHashMap;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

/**
 * An SGLang prefill and decode engine on WireMock, on free loopback ports, and one route to them: engines that fail
 * exactly as a test scripts it (a reset connection, a 503, then an answer), for the guarded engine calls. Out of the
 * box both answer {@code /health} and {@code /abort_request} with 200 and nothing else; a test adds its own stubs,
 * keyed by what it alone sends.
 */
public class WireMockEnginesResource implements QuarkusTestResourceLifecycleManager {

    public static final String ROUTE = "wm-sglang";
    public static final String PREFILL = "p-0";
    public static final String DECODE = "d-0";

    private static volatile WireMockServer prefill;
    private static volatile WireMockServer decode;

    public static WireMockServer prefill() {
        return prefill;
    }

    public static WireMockServer decode() {
        return decode;
    }

    @Override
    public Map<String, String> start() {
        prefill = started();
        decode = started();
        Map<String, String> c = new LinkedHashMap<>();
        String at = "handoff.routes." + ROUTE + ".";
        c.put(at + "model", ROUTE);
        c.put(at + "family", "sglang");
        c.put(at + "prefill", PREFILL + "=" + prefill.baseUrl());
        c.put(at + "decode", DECODE + "=" + decode.baseUrl());
        c.put(at + "default-style", "concurrent");
        c.put(at + "styles", "concurrent");
        c.put(at + "options.bootstrap-port", "9100");
        // one failure opens a breaker: a lost probe that counted would show at once
        c.put(at + "breaker-failures", "1");
        return c;
    }

    private static WireMockServer started() {
        WireMockServer server = new WireMockServer(wireMockConfig().bindAddress("127.0.0.1").dynamicPort());
        server.start();
        server.stubFor(get(urlEqualTo("/health")).atPriority(10).willReturn(aResponse().withStatus(200)));
        server.stubFor(post(urlEqualTo("/abort_request")).atPriority(10).willReturn(aResponse().withStatus(200)));
        return server;
    }

    @Override
    public void stop() {
        if (prefill != null) {
            prefill.stop();
        }
        if (decode != null) {
            decode.stop();
        }
    }
}
