package io.handoff.gateway.api.view;

import io.handoff.gateway.testing.ControlPlaneProfile;
import io.handoff.gateway.testing.HeadlessChromium;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.net.URL;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The live view in a real browser while auth is on ({@link ControlPlaneProfile}): the page shows nothing until it is
 * given an admin key, says so when it is given a tenant's, and keeps the admin key for the tab.
 */
@QuarkusTest
@TestProfile(ControlPlaneProfile.class)
class LiveViewKeyTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static WebDriver browser;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void openBrowser() {
        browser = HeadlessChromium.open();
    }

    @AfterAll
    static void closeBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void thePageAsksForAnAdminKeyAndRefusesATenantsKey() {
        browser.get(base + "handoff");
        WebDriverWait wait = new WebDriverWait(browser, PATIENCE);
        wait.until(ExpectedConditions.attributeToBe(By.id("status"), "data-status", "locked"));
        assertTrue(browser.findElement(By.id("key-form")).isDisplayed());
        assertTrue(browser.findElements(By.cssSelector("#by-state td[data-state]")).isEmpty(), "nothing shown");

        enter(ControlPlaneProfile.TEAM_A_KEY);
        wait.until(ExpectedConditions.textToBe(By.id("key-error"), "that key is not an admin key"));
        assertTrue(browser.findElements(By.cssSelector("#by-state td[data-state]")).isEmpty(), "still nothing");

        enter(ControlPlaneProfile.ADMIN_KEY);
        wait.until(ExpectedConditions.attributeToBe(By.id("status"), "data-status", "live"));
        assertFalse(browser.findElement(By.id("key-form")).isDisplayed());
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("[data-route='vllm']")));

        browser.navigate().refresh();
        wait.until(ExpectedConditions.attributeToBe(By.id("status"), "data-status", "live"));
        assertFalse(browser.findElement(By.id("key-form")).isDisplayed(), "the key is kept for the tab");
    }

    private static void enter(String key) {
        WebElement field = browser.findElement(By.id("key"));
        field.clear();
        field.sendKeys(key);
        browser.findElement(By.cssSelector("#key-form button")).click();
    }
}
