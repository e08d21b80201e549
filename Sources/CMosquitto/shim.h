// SPDX-License-Identifier: Apache-2.0
// libmosquitto, the MQTT client library of the Mosquitto project.
#ifndef SPRINTGATE_CMOSQUITTO_SHIM_H
#define SPRINTGATE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
