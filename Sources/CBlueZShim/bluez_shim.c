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
