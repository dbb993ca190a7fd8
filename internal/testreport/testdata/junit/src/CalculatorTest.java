package com.example;

import static org.junit.Assert.assertEquals;
import org.junit.Ignore;
import org.junit.Test;

public class CalculatorTest {
    @Test public void adds() { assertEquals(4, 2 + 2); }
    @Test public void divides() { System.out.println("dividing 6 by 2"); assertEquals(2, 6 / 3 + 1); }
    @Test public void overflows() { throw new IllegalStateException("counter overflow"); }
    @Ignore("not ready") @Test public void ignored() { }
}
