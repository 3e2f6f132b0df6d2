package io.handoff.gateway.runtime;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ClientTextTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "POST /v1/completions on http://127.0.0.1:18601: HTTP 400|POST /v1/completions on [address]: HTTP 400",
        "Connection refused: localhost/127.0.0.1:6379|Connection refused: localhost/[address]",
        "KV transfer from vllm-p-0.pods.svc:5600 failed|KV transfer from [address] failed",
        "peer localhost:8100 went away|peer [address] went away",
        "bootstrap at [fd00::1]:8998 and [::1] refused|bootstrap at [address] and [address] refused",
        "grpc://10.0.0.9:50051/x is down|[address] is down",
        "decode-0: connection refused|decode-0: connection refused",
        "route llama: styles: generation-first is not supported|route llama: styles: generation-first is not supported",
        "model 'llama-3.1:70b' at epoch 3, 12:30 ms|model 'llama-3.1:70b' at epoch 3, 12:30 ms",
        "request r-1 (session 05c74303) is already running|request r-1 (session 05c74303) is already running",
    })
    void addressesGoAndEverythingElseStays(String text, String forClient) {
        assertEquals(forClient, ClientText.withoutAddresses(text));
    }
}
