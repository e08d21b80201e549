// SPDX-License-Identifier: Apache-2.0
// libxml2's streaming reader, to read GPX files from other devices.
#ifndef SPRINTGATE_CXML2_SHIM_H
#define SPRINTGATE_CXML2_SHIM_H
#include <libxml/xmlreader.h>
#include <libxml/xmlerror.h>
#endif
