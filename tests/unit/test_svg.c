/* test_svg.c - the report's chart kit (src/summary/svg.c, private: svg.h) from plain arrays, as
 * report_charts.c hands them over: where each point lands, what the axes say, when a chart folds
 * into a line of text, where a reference line goes, what the legend and the hover titles say.
 *
 * Every coordinate below is worked out from svg.c's geometry: a 900 x 270 chart, its plot
 * inside PAD_L 84, PAD_R 18, PAD_T 48, PAD_B 36, so the plot is 798 wide (x from 84 to 882) and
 * 186 high (y from 234 at the bottom to 48 at the top):
 *   x = 84 + 798 * t / span,   y = 234 - 186 * (v - bottom) / (top - bottom). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/summary/svg.h"
#include "testlib.h"

static struct rt_buf out;

static const char *text(void)
{
    rt_buf_append(&out, "", 1);
    out.len--;
    return out.p;
}

static void has(const char *needle)
{
    if (!strstr(text(), needle))
        fail_msg("missing: %s\n--- in ---\n%s", needle, text());
}

static void lacks(const char *needle)
{
    if (strstr(text(), needle))
        fail_msg("should not be there: %s\n--- in ---\n%s", needle, text());
}

static int count(const char *needle)
{
    int n = 0;
    for (const char *p = text(); (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int reset(void **state)
{
    (void)state;
    out.len = 0;
    return 0;
}

static const double x3[] = {0, 5, 10};
static const unsigned char all3[] = {1, 1, 1};

/* Three points, 1, 2 and 3 cores at 0, 5 and 10 s: the axis top is the round number above 3
 * (1, 2, 2.5, 5 x 10^k): 5. */
static void test_line_three_points(void **state)
{
    (void)state;
    static const double v[] = {1, 2, 3};
    struct svg_series s = {"tree", "the tree", "#c00", NULL, v, all3, 3};
    struct svg_line_chart c = {.id = "cpu",
                               .title = "CPU cores",
                               .unit = U_CORES,
                               .n = 3,
                               .x = x3,
                               .span = 10,
                               .s = &s,
                               .ns = 1};
    svg_line_chart(&out, &c);
    has("<svg class=\"chart\" id=\"chart-cpu\" data-points=\"3\" viewBox=\"0 0 900 270\" "
        "width=\"900\" height=\"270\" role=\"img\" aria-labelledby=\"chart-cpu-title\">");
    has("<title id=\"chart-cpu-title\">CPU cores</title>");
    /* x: 84, 84 + 399 = 483, 84 + 798 = 882; y: 234 - 186 x 1/5 = 196.8, - 2/5 = 159.6,
     * - 3/5 = 122.4 */
    has("data-series=\"tree\" fill=\"none\" stroke=\"#c00\" stroke-width=\"1.8\" "
        "stroke-linejoin=\"round\" points=\"84.0,196.8 483.0,159.6 882.0,122.4\"/>");
    assert_int_equal(count("<polyline"), 1);
    assert_int_equal(count("<circle"), 0);
    /* the y axis: 0 at 234, 2.5 halfway (234 - 93 = 141), 5 at the top (48); labels 4 below */
    has("<line x1=\"84\" y1=\"234.0\" x2=\"882\" y2=\"234.0\" stroke=\"#333\"/>"
        "<text class=\"tick y\" x=\"78\" y=\"238.0\" text-anchor=\"end\">0</text>");
    has("<line x1=\"84\" y1=\"141.0\" x2=\"882\" y2=\"141.0\" stroke=\"#ccc\" "
        "stroke-dasharray=\"3 3\"/><text class=\"tick y\" x=\"78\" y=\"145.0\" "
        "text-anchor=\"end\">2.5</text>");
    has("<text class=\"tick y\" x=\"78\" y=\"52.0\" text-anchor=\"end\">5</text>");
    /* the x axis over 10 s: ticks every 2 s (10 / 2 = 5 ticks <= 7), 2 s at 84 + 159.6 */
    has("<line x1=\"243.6\" y1=\"234\" x2=\"243.6\" y2=\"239\" stroke=\"#333\"/>"
        "<text class=\"tick x\" x=\"243.6\" y=\"253\" text-anchor=\"middle\">2 s</text>");
    has(">10 s</text>");
    lacks(">12 s</text>");
    assert_int_equal(count("class=\"tick x\""), 6); /* 0 2 4 6 8 10 */
    /* hover bands: from the plot's left to halfway to the next point (84 + 798 x 2.5 / 10 =
     * 283.5), then between the halfway marks, the last one ending at its point */
    has("<rect class=\"hv\" x=\"84.0\" y=\"48\" width=\"199.5\" height=\"186\">"
        "<title>+0.00 s\nthe tree: 1.00</title></rect>");
    has("<rect class=\"hv\" x=\"283.5\" y=\"48\" width=\"399.0\" height=\"186\">"
        "<title>+5.00 s\nthe tree: 2.00</title></rect>");
    has("<rect class=\"hv\" x=\"682.5\" y=\"48\" width=\"199.5\" height=\"186\">"
        "<title>+10.0 s\nthe tree: 3.00</title></rect>");
    /* the legend: a stroke sample at 84..114, its label at 120 */
    has("<line x1=\"84\" y1=\"33\" x2=\"114\" y2=\"33\" stroke=\"#c00\" stroke-width=\"2.5\"/>"
        "<text x=\"120\" y=\"37\">the tree</text>");
    assert_true(strncmp(text(), "<figure>\n", 9) == 0);
    assert_true(strcmp(text() + out.len - 22, "</g>\n</svg>\n</figure>\n") == 0);
}

/* A point without a value is left out of its line (not drawn at 0), and its hover band says so. */
static void test_line_missing_point(void **state)
{
    (void)state;
    static const double v[] = {1, 99, 3};
    static const unsigned char h[] = {1, 0, 1};
    struct svg_series s = {"tree", "tree", "#c00", "4 2", v, h, 2};
    struct svg_line_chart c = {.id = "cpu",
                               .title = "CPU",
                               .unit = U_CORES,
                               .n = 3,
                               .x = x3,
                               .span = 10,
                               .s = &s,
                               .ns = 1};
    svg_line_chart(&out, &c);
    /* the 99 not there, nor scaled for: top 5 from the 3 */
    has(" stroke-dasharray=\"4 2\" points=\"84.0,196.8 882.0,122.4\"/>");
    has("<title>+5.00 s\ntree: not recorded</title>");
    has(">5</text>");
}

/* One point draws no line: it is marked with a circle; its hover band is the whole plot. */
static void test_line_one_point(void **state)
{
    (void)state;
    static const double x[] = {0}, v[] = {2};
    static const unsigned char h[] = {1};
    struct svg_series s = {"sys", "system", "#06c", NULL, v, h, 1};
    /* span 0: the axis is 0..1 s; top nice(2) = 2, so the point is at the top, y 48 */
    struct svg_line_chart c = {
        .id = "one", .title = "one", .unit = U_CORES, .n = 1, .x = x, .span = 0, .s = &s, .ns = 1};
    svg_line_chart(&out, &c);
    has("points=\"84.0,48.0\"/>\n<circle cx=\"84.0\" cy=\"48.0\" r=\"3.5\" fill=\"#06c\"/>");
    has("<rect class=\"hv\" x=\"84.0\" y=\"48\" width=\"798.0\" height=\"186\">");
}

/* Nothing above zero: the chart folds into its `empty` line, nothing else is drawn. */
static void test_line_empty_folds(void **state)
{
    (void)state;
    static const double v[] = {0, 0, 0};
    struct svg_series s = {"gpu", "GPU", "#0a0", NULL, v, all3, 3};
    struct svg_line_chart c = {.id = "gpu",
                               .title = "GPUs",
                               .unit = U_GPUS,
                               .empty = "No GPU was busy during the run.",
                               .n = 3,
                               .x = x3,
                               .span = 10,
                               .s = &s,
                               .ns = 1};
    svg_line_chart(&out, &c);
    assert_string_equal(text(), "<p class=\"folded muted\" id=\"chart-gpu\" data-folded=\"1\">No "
                                "GPU was busy during the run.</p>\n");
    /* without `empty` the zeros are drawn, on an axis of 0..1, along the bottom */
    out.len = 0;
    c.empty = NULL;
    svg_line_chart(&out, &c);
    has("points=\"84.0,234.0 483.0,234.0 882.0,234.0\"");
    has(">1</text>");
}

/* Values that hardly move: `flat` folds them into one figure; a line that moves a little gets an
 * axis that spans the values, not one from 0. */
static void test_line_flat(void **state)
{
    (void)state;
    /* 2.004 - 2.001 = 0.003 < 0.005: one figure, the highest, as the unit prints it */
    static const double v[] = {2.001, 2.003, 2.004};
    struct svg_series s = {"tree", "tree", "#c00", NULL, v, all3, 3};
    struct svg_line_chart c = {.id = "cpu",
                               .title = "CPU",
                               .unit = U_CORES,
                               .flat = "CPU",
                               .n = 3,
                               .x = x3,
                               .span = 10,
                               .s = &s,
                               .ns = 1};
    svg_line_chart(&out, &c);
    assert_string_equal(text(), "<p class=\"folded muted\" id=\"chart-cpu\" data-folded=\"1\">CPU: "
                                "2.00 throughout the run</p>\n");
    /* memory in MiB */
    out.len = 0;
    static const double m[] = {512, 512, 512};
    s.v = m;
    c.unit = U_MIB;
    c.flat = "memory";
    svg_line_chart(&out, &c);
    has(">memory: 512.0 MiB throughout the run</p>");
}

static void test_line_flat_axis(void **state)
{
    (void)state;
    /* 100 .. 104: step nice(4 / 2) = 2, bottom floor(100 / 2) x 2 = 100, top 100 + 2 x 2 = 104:
     * 100 at the bottom (234), 104 at the top (48) */
    static const double x[] = {0, 10}, v[] = {100, 104};
    static const unsigned char h[] = {1, 1};
    struct svg_series s = {"n", "processes", "#333", NULL, v, h, 2};
    struct svg_ref ref = {"host", "vCPUs", 1000};
    struct svg_line_chart c = {.id = "procs",
                               .title = "processes",
                               .unit = U_COUNT,
                               .flat = "processes",
                               .n = 2,
                               .x = x,
                               .span = 10,
                               .s = &s,
                               .ns = 1,
                               .refs = &ref,
                               .nrefs = 1};
    svg_line_chart(&out, &c);
    has("points=\"84.0,234.0 882.0,48.0\"");
    has("text-anchor=\"end\">100</text>");
    has("text-anchor=\"end\">102</text>");
    has("text-anchor=\"end\">104</text>");
    lacks("text-anchor=\"end\">0</text>");
    lacks("data-ref=\"host\""); /* a flat chart draws no reference line */
    /* 101 .. 104.5: step nice(1.75) = 2 gives 100..104, short of 104.5; the next step up,
     * nice(2.02) = 2.5: bottom floor(101 / 2.5) x 2.5 = 100, top 105 */
    out.len = 0;
    static const double w[] = {101, 104.5};
    s.v = w;
    svg_line_chart(&out, &c);
    has("text-anchor=\"end\">102.5</text>");
    has("text-anchor=\"end\">105</text>");
    /* 101 at 234 - 186 x 1/5 = 196.8, 104.5 at 234 - 186 x 4.5/5 = 66.6 */
    has("points=\"84.0,196.8 882.0,66.6\"");
}

/* Reference lines: within four times the data's peak on the scale (which grows to hold them),
 * further up named in the corner. */
static void test_line_refs(void **state)
{
    (void)state;
    static const double x[] = {0, 10}, v[] = {1, 2};
    static const unsigned char h[] = {1, 1};
    struct svg_series s = {"tree", "tree", "#c00", NULL, v, h, 2};
    /* 16 > 4 x 2: off the scale; 4 <= 8: the axis top grows from nice(2) = 2 to nice(4) = 5 */
    const struct svg_ref refs[] = {{"host", "host vCPUs", 16}, {"alloc", "allocated", 4}};
    struct svg_line_chart c = {.id = "cpu",
                               .title = "CPU",
                               .unit = U_CORES,
                               .n = 2,
                               .x = x,
                               .span = 10,
                               .s = &s,
                               .ns = 1,
                               .refs = refs,
                               .nrefs = 2};
    svg_line_chart(&out, &c);
    has("<text class=\"ref off\" data-ref=\"host\" x=\"882\" y=\"18\" text-anchor=\"end\">host "
        "vCPUs 16 (above the scale)</text>");
    /* 4 of 5: y = 234 - 186 x 4/5 = 85.2, its label 3 above */
    has("<g class=\"ref\" data-ref=\"alloc\" data-value=\"4\"><line x1=\"84\" y1=\"85.2\" "
        "x2=\"882\" y2=\"85.2\" stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>"
        "<text x=\"878\" y=\"82.2\" text-anchor=\"end\" fill=\"#333\">allocated 4</text>"
        "<title>allocated: 4</title></g>");
    has(">5</text>");
    /* 1 and 2 on 0..5 */
    has("points=\"84.0,196.8 882.0,159.6\"");
    /* two off the scale stack down the corner, a label line (15 px) apart */
    out.len = 0;
    const struct svg_ref far[] = {{"a", "A", 100}, {"b", "B", 200.5}};
    c.refs = far;
    svg_line_chart(&out, &c);
    has("data-ref=\"a\" x=\"882\" y=\"18\" text-anchor=\"end\">A 100 (above the scale)");
    has("data-ref=\"b\" x=\"882\" y=\"33\" text-anchor=\"end\">B 200.5 (above the scale)");
    /* with no data above zero any reference is on the scale: top nice(16) = 20 */
    out.len = 0;
    static const double zero[] = {0, 0};
    s.v = zero;
    c.refs = refs;
    svg_line_chart(&out, &c);
    lacks("above the scale");
    has(">20</text>");
    /* 16 of 20: 234 - 148.8 = 85.2 */
    has("data-ref=\"host\" data-value=\"16\"><line x1=\"84\" y1=\"85.2\"");
}

/* The legend: each series in turn, a dashed one dashed, one without values "(not recorded)" and
 * left out of the lines and the hover titles; labels escaped. */
static void test_line_legend(void **state)
{
    (void)state;
    static const double v[] = {1, 2, 3}, none[] = {0, 0, 0};
    static const unsigned char no[] = {0, 0, 0};
    const struct svg_series s[] = {{"tree", "tree", "#c00", NULL, v, all3, 3},
                                   {"psi", "<pressure>", "#888", "4 2", none, no, 0}};
    struct svg_line_chart c = {
        .id = "cpu", .title = "CPU", .unit = U_CORES, .n = 3, .x = x3, .span = 10, .s = s, .ns = 2};
    svg_line_chart(&out, &c);
    has("<text x=\"120\" y=\"37\">tree</text>");
    /* the next entry at 84 + 36 + 7.2 x 4 + 22 = 170.8: its sample 171..201, its text at 207 */
    has("<line x1=\"171\" y1=\"33\" x2=\"201\" y2=\"33\" stroke=\"#888\" stroke-width=\"2.5\" "
        "stroke-dasharray=\"4 2\"/><text x=\"207\" y=\"37\">&lt;pressure&gt; (not "
        "recorded)</text>");
    assert_int_equal(count("<polyline"), 1);
    lacks("data-series=\"psi\"");
    lacks("&lt;pressure&gt;:");
    lacks("<pressure>");
}

/* The x axis in minutes and hours once the span is long. */
static void test_time_ticks(void **state)
{
    (void)state;
    static const double x[] = {0, 600}, v[] = {1, 1.5};
    static const unsigned char h[] = {1, 1};
    struct svg_series s = {"tree", "tree", "#c00", NULL, v, h, 2};
    /* 600 s: 600 / 60 = 10 ticks is too many, 600 / 120 = 5: every 2 min */
    struct svg_line_chart c = {
        .id = "t", .title = "t", .unit = U_CORES, .n = 2, .x = x, .span = 600, .s = &s, .ns = 1};
    svg_line_chart(&out, &c);
    has(">0 min</text>");
    has(">2 min</text>");
    has(">10 min</text>");
    assert_int_equal(count("class=\"tick x\""), 6);
    /* the hover title of the last point: 600 s is "10m00s" */
    has("<title>+10m00s\ntree: 1.50</title>");
    /* 10 h: 36000 / 3600 = 10, / 7200 = 5: every 2 h */
    out.len = 0;
    static const double xh[] = {0, 36000};
    c.x = xh;
    c.span = 36000;
    svg_line_chart(&out, &c);
    has(">2 h</text>");
    has(">10 h</text>");
    lacks(" min</text>");
}

/* The axis labels in the unit of the top: MiB up to 1 GiB, GiB from there. */
static void test_axis_units(void **state)
{
    (void)state;
    static const double x[] = {0, 10}, mib[] = {100, 1500};
    static const unsigned char h[] = {1, 1};
    struct svg_series s = {"mem", "memory", "#c00", NULL, mib, h, 2};
    /* 1500 MiB = 1.46 GiB: top nice(1.46) = 2 GiB, halfway 1 GiB */
    struct svg_line_chart c = {
        .id = "m", .title = "m", .unit = U_MIB, .n = 2, .x = x, .span = 10, .s = &s, .ns = 1};
    svg_line_chart(&out, &c);
    has(">0 GiB</text>");
    has(">1 GiB</text>");
    has(">2 GiB</text>");
    /* 1500 of 2048: 234 - 186 x 1500 / 2048 = 97.77 */
    has("points=\"84.0,224.9 882.0,97.8\"");
    has("memory: 1.46 GiB</title>");
    /* bytes per second: 3000 B/s -> 2.93 KiB/s -> top 5 KiB/s, halfway 2.5 KiB/s */
    out.len = 0;
    static const double bps[] = {0, 3000};
    s.v = bps;
    c.unit = U_BPS;
    svg_line_chart(&out, &c);
    has(">0 KiB/s</text>");
    has(">2.5 KiB/s</text>");
    has(">5 KiB/s</text>");
    has("memory: 2.93 KiB/s</title>");
}

/* Two layers stacked: each a polygon, its upper edge left to right, the layer below's back. */
static void test_stacked_two_layers(void **state)
{
    (void)state;
    static const double l0[] = {100, 200, 300}, l1[] = {50, 50, 100};
    const double *const val[] = {l0, l1};
    const char *const labels[] = {"python", "other & co"};
    const char *const colors[] = {"#c00", "#06c"};
    /* totals 150, 250, 400: top nice(400) = 500 MiB */
    struct svg_stack_chart c = {.id = "pss",
                                .title = "memory by process",
                                .n = 3,
                                .x = x3,
                                .span = 10,
                                .has = all3,
                                .nl = 2,
                                .labels = labels,
                                .colors = colors,
                                .val = val};
    svg_stacked_chart(&out, &c);
    has("<svg class=\"chart stacked\" id=\"chart-pss\" data-points=\"3\"");
    has(">0 MiB</text>");
    has(">250 MiB</text>");
    has(">500 MiB</text>");
    /* layer 0: 100, 200, 300 of 500 (y 196.8, 159.6, 122.4), back along 0 (y 234) */
    has("<polygon class=\"layer\" data-layer=\"0\" fill=\"#c00\" fill-opacity=\"0.85\" "
        "stroke=\"#fff\" stroke-width=\"0.5\" points=\"84.0,196.8 483.0,159.6 882.0,122.4 "
        "882.0,234.0 483.0,234.0 84.0,234.0\"><title>python</title></polygon>");
    /* layer 1: 150, 250, 400 (y 178.2, 141.0, 85.2), back along layer 0's edge */
    has("<polygon class=\"layer\" data-layer=\"1\" fill=\"#06c\" fill-opacity=\"0.85\" "
        "stroke=\"#fff\" stroke-width=\"0.5\" points=\"84.0,178.2 483.0,141.0 882.0,85.2 "
        "882.0,122.4 483.0,159.6 84.0,196.8\"><title>other &amp; co</title></polygon>");
    /* the legend's swatches */
    has("<rect x=\"84\" y=\"27\" width=\"30\" height=\"11\" fill=\"#c00\"/>"
        "<text x=\"120\" y=\"37\">python</text>");
    /* hover: the top layer first */
    has("<title>+5.00 s\nother &amp; co: 50.0 MiB\npython: 200.0 MiB</title>");
}

/* A point without a sample is left out of every layer and of the hover bands. */
static void test_stacked_missing_point(void **state)
{
    (void)state;
    static const double l0[] = {100, 999, 300}, l1[] = {50, 999, 100};
    static const unsigned char h[] = {1, 0, 1};
    const double *const val[] = {l0, l1};
    const char *const labels[] = {"a", "b"};
    const char *const colors[] = {"#111", "#222"};
    struct svg_stack_chart c = {.id = "pss",
                                .title = "t",
                                .n = 3,
                                .x = x3,
                                .span = 10,
                                .has = h,
                                .nl = 2,
                                .labels = labels,
                                .colors = colors,
                                .val = val};
    svg_stacked_chart(&out, &c);
    /* the 999s neither drawn nor scaled for: top 500 from 400 */
    has("points=\"84.0,196.8 882.0,122.4 882.0,234.0 84.0,234.0\"");
    has("points=\"84.0,178.2 882.0,85.2 882.0,122.4 84.0,196.8\"");
    assert_int_equal(count("<rect class=\"hv\""), 2);
    lacks("+5.00 s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_line_three_points, reset),
        cmocka_unit_test_setup(test_line_missing_point, reset),
        cmocka_unit_test_setup(test_line_one_point, reset),
        cmocka_unit_test_setup(test_line_empty_folds, reset),
        cmocka_unit_test_setup(test_line_flat, reset),
        cmocka_unit_test_setup(test_line_flat_axis, reset),
        cmocka_unit_test_setup(test_line_refs, reset),
        cmocka_unit_test_setup(test_line_legend, reset),
        cmocka_unit_test_setup(test_time_ticks, reset),
        cmocka_unit_test_setup(test_axis_units, reset),
        cmocka_unit_test_setup(test_stacked_two_layers, reset),
        cmocka_unit_test_setup(test_stacked_missing_point, reset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rt_buf_free(&out);
    return rc;
}
