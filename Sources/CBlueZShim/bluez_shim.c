// SPDX-License-Identifier: Apache-2.0
#include "bluez_shim.h"
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/// The ATT channel's fixed L2CAP channel id.
#define SG_ATT_CID 4

int sg_bt_address(int dev_id, uint8_t out[6]) {
    bdaddr_t a;
    if (hci_devba(dev_id, &a) < 0) return -1;
    for (int i = 0; i < 6; i++) out[i] = a.b[5 - i];
    return 0;
}

int sg_bt_is_up(int dev_id) {
    struct hci_dev_info di;
    if (hci_devinfo(dev_id, &di) < 0) return -1;
    return hci_test_bit(HCI_UP, &di.flags) ? 1 : 0;
}

int sg_bt_up(int dev_id) {
    int s = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (s < 0) return -1;
    int r = ioctl(s, HCIDEVUP, dev_id);
    int e = errno;
    close(s);
    if (r < 0 && e != EALREADY) { errno = e; return -1; }
    return 0;
}

int sg_bt_advertise(int dev_id, int on) {
    int dd = hci_open_dev(dev_id);
    if (dd < 0) return -1;
    int r = hci_le_set_advertise_enable(dd, on ? 1 : 0, 2000);
    int e = errno;
    hci_close_dev(dd);
    errno = e;
    return r;
}

static int le_data(int dev_id, uint16_t ocf, const uint8_t *data, int len) {
    if (len < 0 || len > 31) { errno = EINVAL; return -1; }
    /* LE Set Advertising Data and LE Set Scan Response Data share one layout: a length
       and 31 bytes. */
    uint8_t cp[32];
    memset(cp, 0, sizeof(cp));
    cp[0] = (uint8_t)len;
    memcpy(cp + 1, data, (size_t)len);
    int dd = hci_open_dev(dev_id);
    if (dd < 0) return -1;
    uint8_t status = 0;
    struct hci_request rq;
    memset(&rq, 0, sizeof(rq));
    rq.ogf = OGF_LE_CTL;
    rq.ocf = ocf;
    rq.cparam = cp;
    rq.clen = sizeof(cp);
    rq.rparam = &status;
    rq.rlen = 1;
    int r = hci_send_req(dd, &rq, 2000);
    int e = errno;
    hci_close_dev(dd);
    if (r < 0) { errno = e; return -1; }
    if (status) { errno = EIO; return -1; }
    return 0;
}

int sg_bt_set_advertising_data(int dev_id, const uint8_t *data, int len) {
    return le_data(dev_id, OCF_LE_SET_ADVERTISING_DATA, data, len);
}

int sg_bt_set_scan_response(int dev_id, const uint8_t *data, int len) {
    return le_data(dev_id, OCF_LE_SET_SCAN_RESPONSE_DATA, data, len);
}

int sg_mgmt_open(void) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -1;
    struct sockaddr_hci a;
    memset(&a, 0, sizeof(a));
    a.hci_family = AF_BLUETOOTH;
    a.hci_dev = HCI_DEV_NONE;
    a.hci_channel = HCI_CHANNEL_CONTROL;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { int e = errno; close(fd); errno = e; return -1; }
    return fd;
}

static int att_bind(int fd, int dev_id) {
    struct sockaddr_l2 a;
    memset(&a, 0, sizeof(a));
    a.l2_family = AF_BLUETOOTH;
    a.l2_cid = htobs(SG_ATT_CID);
    a.l2_bdaddr_type = BDADDR_LE_PUBLIC;
    if (dev_id >= 0 && hci_devba(dev_id, &a.l2_bdaddr) < 0) return -1;
    return bind(fd, (struct sockaddr *)&a, sizeof(a));
}

int sg_att_connect(int dev_id, const uint8_t peer[6], int random) {
    int fd = socket(AF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_L2CAP);
    if (fd < 0) return -1;
    if (att_bind(fd, dev_id) < 0) { int e = errno; close(fd); errno = e; return -1; }
    struct sockaddr_l2 a;
    memset(&a, 0, sizeof(a));
    a.l2_family = AF_BLUETOOTH;
    a.l2_cid = htobs(SG_ATT_CID);
    a.l2_bdaddr_type = random ? BDADDR_LE_RANDOM : BDADDR_LE_PUBLIC;
    for (int i = 0; i < 6; i++) a.l2_bdaddr.b[i] = peer[5 - i];
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) { int e = errno; close(fd); errno = e; return -1; }
    return fd;
}

int sg_att_listen(int dev_id) {
    int fd = socket(AF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC, BTPROTO_L2CAP);
    if (fd < 0) return -1;
    if (att_bind(fd, dev_id) < 0 || listen(fd, 1) < 0) { int e = errno; close(fd); errno = e; return -1; }
    return fd;
}

int sg_socket_unsent(int fd) {
    /* Why the difference: a Bluetooth socket answers TIOCOUTQ with the free space of its
       send buffer (bt_sock_ioctl), not with what is queued as TCP does. */
    int space = 0, size = 0;
    socklen_t len = sizeof(size);
    if (ioctl(fd, TIOCOUTQ, &space) < 0) return -1;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0) return -1;
    return size > space ? size - space : 0;
}

int sg_socket_error(int fd) {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return errno;
    return err;
}

int sg_bt_drop_links(int dev_id) {
    int dd = hci_open_dev(dev_id);
    if (dd < 0) return -1;
    enum { MAX = 10 };
    struct hci_conn_list_req *cl = calloc(1, sizeof(*cl) + MAX * sizeof(struct hci_conn_info));
    if (!cl) { hci_close_dev(dd); errno = ENOMEM; return -1; }
    cl->dev_id = dev_id;
    cl->conn_num = MAX;
    int dropped = 0;
    if (ioctl(dd, HCIGETCONNLIST, cl) == 0) {
        for (int i = 0; i < cl->conn_num; i++) {
            if (hci_disconnect(dd, cl->conn_info[i].handle, HCI_OE_USER_ENDED_CONNECTION, 2000) == 0) dropped++;
        }
    } else {
        dropped = -1;
    }
    int e = errno;
    free(cl);
    hci_close_dev(dd);
    errno = e;
    return dropped;
}
