package io.handoff.gateway;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The arrows between the rooms of the house, as README's "The house" draws them, checked on the compiled main code
 * of the gateway, the connectors and the simulator. A new room states its arrows here when it is made.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ArchitectureTest {

    private static final String GATEWAY = "io.handoff.gateway";

    /** Each room of the gateway and the rooms it may use (besides itself, the SPI, the wire and libraries). */
    static final Map<String, List<String>> ARROWS = Map.ofEntries(
            Map.entry("api", List.of("control", "orchestration", "routing", "session", "tenancy", "runtime")),
            Map.entry("control", List.of("orchestration", "routing", "session", "tenancy", "runtime")),
            Map.entry("orchestration", List.of("routing", "session", "telemetry", "runtime")),
            Map.entry("demo", List.of("routing", "orchestration")),
            Map.entry("fleet", List.of("control", "routing")),
            Map.entry("reaper", List.of("session", "telemetry", "runtime")),
            Map.entry("routing", List.of("reaper", "session", "runtime")),
            Map.entry("session", List.of("runtime")),
            Map.entry("telemetry", List.of("session")),
            Map.entry("tenancy", List.of()),
            Map.entry("runtime", List.of()));

    private JavaClasses main;

    @BeforeAll
    void importMainCode() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(GATEWAY, "io.handoff.connector", "io.handoff.simulator");
        assertTrue(main.stream().anyMatch(c -> c.getPackageName().startsWith(GATEWAY + ".orchestration")));
        assertTrue(main.stream().anyMatch(c -> c.getPackageName().startsWith("io.handoff.connector.vllm")));
        assertTrue(main.stream().anyMatch(c -> c.getPackageName().startsWith("io.handoff.simulator")));
    }

    static Stream<String> rooms() {
        return ARROWS.keySet().stream().sorted();
    }

    @ParameterizedTest
    @MethodSource("rooms")
    void eachRoomUsesOnlyTheRoomsItsArrowsAllow(String room) {
        String[] allowed = Stream.concat(Stream.of(room), ARROWS.get(room).stream())
                .map(r -> GATEWAY + "." + r + "..").toArray(String[]::new);
        classes().that().resideInAPackage(GATEWAY + "." + room + "..")
                .should().onlyDependOnClassesThat(resideOutsideOfPackage(GATEWAY + "..")
                        .or(resideInAnyPackage(allowed)))
                .because("README's house allows " + room + " -> " + ARROWS.get(room))
                .check(main);
    }

    @Test
    void everyPackageOfTheGatewayIsARoomOfTheHouse() {
        classes().that().resideInAPackage(GATEWAY + "..")
                .should().resideInAnyPackage(ARROWS.keySet().stream().map(r -> GATEWAY + "." + r + "..")
                        .toArray(String[]::new))
                .because("a new room states its arrows in ArchitectureTest.ARROWS and README's house")
                .check(main);
    }

    @Test
    void theGatewayNamesNoEngineFamilyOnlyTheSpi() {
        rule(noClasses().that().resideInAPackage(GATEWAY + "..")
                .should().dependOnClassesThat(resideInAPackage("io.handoff.connector..")
                        .and(not(resideInAPackage("io.handoff.connector.spi..")))));
    }

    @Test
    void onlyTheDemoPackageUsesTheSimulator() {
        rule(noClasses().that().resideInAPackage(GATEWAY + "..").and().resideOutsideOfPackage(GATEWAY + ".demo..")
                .should().dependOnClassesThat().resideInAPackage("io.handoff.simulator.."));
    }

    @Test
    void theControlPlaneNeverReachesBackIntoTheApiLayer() {
        rule(noClasses().that().resideInAPackage(GATEWAY + ".control..")
                .should().dependOnClassesThat().resideInAPackage(GATEWAY + ".api.."));
    }

    @Test
    void sessionsKnowNothingOfTelemetry() {
        rule(noClasses().that().resideInAPackage(GATEWAY + ".session..")
                .should().dependOnClassesThat().resideInAPackage(GATEWAY + ".telemetry.."));
    }

    @Test
    void connectorsNeverSeeTheGateway() {
        rule(noClasses().that().resideInAPackage("io.handoff.connector..")
                .should().dependOnClassesThat().resideInAPackage(GATEWAY + ".."));
    }

    @Test
    void theSimulatorImitatesEnginesWithoutUsingAnyConnector() {
        rule(noClasses().that().resideInAPackage("io.handoff.simulator..")
                .should().dependOnClassesThat().resideInAPackage("io.handoff.connector.."));
    }

    private void rule(ArchRule rule) {
        rule.check(main);
    }
}
