package io.handoff.benchmarks;

import java.util.List;

/** A plain-text table for the console: the first row is the header, the first column is left-aligned. */
final class Table {

    private Table() {
    }

    static void print(List<String[]> rows) {
        int columns = rows.get(0).length;
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (int n = 0; n < rows.size(); n++) {
            String[] r = rows.get(n);
            StringBuilder line = new StringBuilder("  ");
            line.append(String.format("%-" + width[0] + "s", r[0]));
            for (int i = 1; i < r.length; i++) {
                line.append("  ").append(String.format("%" + width[i] + "s", r[i]));
            }
            System.out.println(line);
            if (n == 0) {
                System.out.println("  " + "-".repeat(line.length() - 2));
            }
        }
    }
}
