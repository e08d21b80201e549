// SPDX-License-Identifier: Apache-2.0
// The CLinuxSys module is header-only; this unit gives the target a compiled source.
#include "CLinuxSys.h"
