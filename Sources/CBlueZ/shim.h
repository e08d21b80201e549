// SPDX-License-Identifier: Apache-2.0
// BlueZ HCI and L2CAP sockets, for Bluetooth LE sensors (rowing machines).
#ifndef SPRINTGATE_CBLUEZ_SHIM_H
#define SPRINTGATE_CBLUEZ_SHIM_H
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>
#endif
