// SPDX-License-Identifier: Apache-2.0
// ALSA PCM playback for start sounds, with status timestamps for the sound's onset.
#ifndef SPRINTGATE_CALSA_SHIM_H
#define SPRINTGATE_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
