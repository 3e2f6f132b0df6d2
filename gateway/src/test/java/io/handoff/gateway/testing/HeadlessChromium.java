package io.handoff.gateway.testing;

import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import java.io.File;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real browser for the tests of the live view: Debian's chromium, headless, driven by Debian's chromedriver (both
 * installed by {@code .ci/run}); named by path, so Selenium never looks for a browser or driver to download.
 */
public final class HeadlessChromium {

    private HeadlessChromium() {
    }

    public static WebDriver open() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(installed("/usr/bin/chromium", "chromium"));
        // as root (CI) chromium runs only without its sandbox; /dev/shm is small in containers
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,2400");
        ChromeDriverService driver = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(installed("/usr/bin/chromedriver", "chromium-driver")))
                .usingAnyFreePort().build();
        return new ChromeDriver(driver, options);
    }

    private static String installed(String path, String debianPackage) {
        assertTrue(new File(path).canExecute(), path + " is missing: apt-get install " + debianPackage
                + " (.ci/run installs it)");
        return path;
    }
}
