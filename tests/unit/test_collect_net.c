/* test_collect_net.c - src/collect/net.c on fixture trees built here: interfaces' identity and
 * per-interface deltas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void test_net_identity_and_deltas(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    const char *hdr = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n";
    char text[1024];
    snprintf(text, sizeof(text),
             "%s    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n"
             "  eth0: 1000 10 1 2 0 0 0 0 500 5 3 4 0 0 0 0\n"
             "veth1:4000000000 9 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n",
             hdr);
    fx_write(g.root, "proc/net/dev", text);
    fx_write(g.root, "sys/class/net/eth0/address", "52:54:00:12:34:56\n");
    fx_write(g.root, "sys/class/net/eth0/mtu", "1500\n");
    fx_write(g.root, "sys/class/net/eth0/speed", "10000\n");
    fx_write(g.root, "sys/class/net/eth0/operstate", "up\n");
    fx_symlink(g.root, "sys/class/net/eth0/device/driver",
               "../../../bus/virtio/drivers/virtio_net");
    fx_write(g.root, "sys/class/net/veth1/speed", "-1\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->nnics, 2);
    assert_true(s->net_rx_bytes == RT_NA);
    const struct rt_nic_sample *e = &s->nics[0];
    assert_string_equal(e->ident->name, "eth0");
    assert_string_equal(e->ident->mac, "52:54:00:12:34:56");
    assert_string_equal(e->ident->driver, "virtio_net");
    assert_int_equal(e->ident->mtu, 1500);
    assert_int_equal(e->ident->speed_mbps, 10000);
    assert_string_equal(e->operstate, "up");
    assert_int_equal(e->f[RT_NIC_RX_ERRS], 1);
    assert_int_equal(e->f[RT_NIC_TX_DROP], 4);
    assert_int_equal(s->nics[1].f[RT_NIC_RX_BYTES], 4000000000LL); /* glued to the colon */
    assert_true(s->nics[1].ident->speed_mbps == RT_NA);
    assert_null(s->nics[1].ident->driver);
    /* veth1 disappears, eth0 moves on: eth0's traffic is not cancelled */
    snprintf(text, sizeof(text), "%s  eth0: 1800 10 1 2 0 0 0 0 900 5 3 4 0 0 0 0\n", hdr);
    fx_write(g.root, "proc/net/dev", text);
    s = fx_gen_sample(&g);
    assert_int_equal(s->nnics, 1);
    assert_int_equal(s->net_rx_bytes, 800);
    assert_int_equal(s->net_tx_bytes, 400);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_net_identity_and_deltas),
    };
    return cmocka_run_group_tests_name("network", tests, NULL, NULL);
}
