// SPDX-License-Identifier: Apache-2.0
// The ATT channel (L2CAP CID 4 on an LE link) as a central opens it and as a peripheral
// accepts it, and the few controller calls the rig's virtual controllers need, over
// BlueZ's libbluetooth. In C, and behind a header with no system includes, because the
// Bluetooth headers' macros (HCIDEVUP, sockaddr_l2) do not import into Swift and their
// socket headers would otherwise be claimed by a second module.
#ifndef SPRINTGATE_BLUEZ_SHIM_H
#define SPRINTGATE_BLUEZ_SHIM_H
#include <stdint.h>

/// The controller's own address, most significant byte first; -1 with errno on failure.
int sg_bt_address(int dev_id, uint8_t out[6]);
/// 1 when controller `dev_id` is up (powered), 0 when down; -1 with errno (ENODEV: none).
int sg_bt_is_up(int dev_id);
/// Brings controller `dev_id` up (already up is fine); -1 with errno on failure.
int sg_bt_up(int dev_id);
/// Connectable LE advertising on or off (the controller's default parameters: ADV_IND).
int sg_bt_advertise(int dev_id, int on);
/// The advertising data and the scan response data (at most 31 bytes each) of a
/// peripheral's advertising; -1 with errno on failure (EIO: the controller refused).
int sg_bt_set_advertising_data(int dev_id, const uint8_t *data, int len);
int sg_bt_set_scan_response(int dev_id, const uint8_t *data, int len);
/// A socket on BlueZ's management channel (the kernel's HCI control channel, which
/// bluetoothd and btmgmt use), for every controller; -1 with errno on failure.
int sg_mgmt_open(void);
/// Starts an ATT connection from controller `dev_id` (-1: any) to `peer` (most significant
/// byte first; `random`: a random address). Non-blocking: the link is made when the socket
/// becomes writable, and `sg_socket_error` says how it went. The fd, or -1 with errno.
int sg_att_connect(int dev_id, const uint8_t peer[6], int random);
/// A listening ATT socket on controller `dev_id` (a peripheral's side), or -1 with errno.
int sg_att_listen(int dev_id);
/// Drops every link of controller `dev_id` (HCI Disconnect, "remote user terminated"):
/// what a device going out of reach looks like to the other side. The number dropped, or
/// -1 with errno.
int sg_bt_drop_links(int dev_id);
/// Bytes a socket has queued and the controller not yet taken (TIOCOUTQ), or -1.
int sg_socket_unsent(int fd);
/// SO_ERROR of a socket (0: connected).
int sg_socket_error(int fd);
#endif
