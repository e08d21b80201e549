#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A PM5 made of BlueZ's own GATT server: registers the PM5's services with bluetoothd
# through its D-Bus API (GattManager1, as bluez-test-scripts' example-gatt-server does) and
# advertises through LEAdvertisingManager1, then plays a PM5 notification log (the text
# format of Rowing's PM5Log) once the central has subscribed to every notifying
# characteristic. bluetoothd answers the central's ATT requests itself: the hub's GATT
# client is checked against an implementation that is not the project's.
#
# Usage: /usr/bin/python3 scripts/pm5-gatt-server.py --adapter hci1 --log FILE
#            [--serial 430000009] [--timeout 120]
# Prints "advertising" once registered, "subscribed" once the central subscribed and "sent N"
# when the log is played; runs until SIGTERM or SIGINT, then exits 0 if the whole log was
# sent (1 otherwise, and on an error or the timeout).
# Needs python3-dbus and python3-gi (Debian's, hence /usr/bin/python3) and bluetoothd.
import argparse
import os
import signal

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
SERVICE = "org.bluez.GattService1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"
NOTIFYING = [0x31, 0x32, 0x33, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D, 0x22]


def pm5(short):
    return "ce06%04x-43e5-11e4-916c-0800200c9a66" % short


class Characteristic(dbus.service.Object):
    def __init__(self, bus, path, service, short, flags, value, server):
        self.path = path
        self.service = service
        self.short = short
        self.flags = flags
        self.value = value
        self.notifying = False
        self.server = server
        dbus.service.Object.__init__(self, bus, path)

    def properties(self):
        return {CHARACTERISTIC: {"Service": dbus.ObjectPath(self.service), "UUID": pm5(self.short),
                                 "Flags": dbus.Array(self.flags, signature="s")}}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[CHARACTERISTIC]

    @dbus.service.method(CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array([dbus.Byte(b) for b in self.value], signature="y")

    @dbus.service.method(CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.value = bytes(value)
        self.server.written(self.short, self.value)

    @dbus.service.method(CHARACTERISTIC)
    def StartNotify(self):
        self.notifying = True
        self.server.subscribed()

    @dbus.service.method(CHARACTERISTIC)
    def StopNotify(self):
        self.notifying = False

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def notify(self, data):
        self.value = data
        self.PropertiesChanged(CHARACTERISTIC, {"Value": dbus.Array([dbus.Byte(b) for b in data], signature="y")}, [])


class Service(dbus.service.Object):
    def __init__(self, bus, path, short):
        self.path = path
        self.short = short
        self.characteristics = []
        dbus.service.Object.__init__(self, bus, path)

    def properties(self):
        return {SERVICE: {"UUID": pm5(self.short), "Primary": True,
                          "Characteristics": dbus.Array([dbus.ObjectPath(c.path) for c in self.characteristics], signature="o")}}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[SERVICE]


class Application(dbus.service.Object):
    def __init__(self, bus, services):
        self.path = "/sprintgate/pm5"
        self.services = services
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(OM, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        out = {}
        for s in self.services:
            out[dbus.ObjectPath(s.path)] = s.properties()
            for c in s.characteristics:
                out[dbus.ObjectPath(c.path)] = c.properties()
        return out


class Advertisement(dbus.service.Object):
    def __init__(self, bus, name, with_service):
        self.path = "/sprintgate/pm5/advertisement"
        self.name = name
        self.with_service = with_service
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        props = {"Type": "peripheral", "LocalName": dbus.String(self.name)}
        if self.with_service:
            props["ServiceUUIDs"] = dbus.Array([pm5(0x0000)], signature="s")
        return props

    @dbus.service.method(ADVERTISEMENT)
    def Release(self):
        pass


class Server:
    def __init__(self, bus, adapter, events, serial, loop, timeout):
        self.bus = bus
        self.loop = loop
        self.events = events
        self.sent = 0
        self.status = 1
        self.playing = False
        self.adapter_path = "/org/bluez/" + adapter
        info = Service(bus, "/sprintgate/pm5/service0", 0x0010)
        control = Service(bus, "/sprintgate/pm5/service1", 0x0020)
        rowing = Service(bus, "/sprintgate/pm5/service2", 0x0030)
        self.chars = {}

        def add(service, short, flags, value=b""):
            c = Characteristic(bus, "%s/char%d" % (service.path, len(service.characteristics)), service.path, short, flags, value, self)
            service.characteristics.append(c)
            self.chars[short] = c

        for short, text in [(0x11, "PM5"), (0x12, serial), (0x13, "907"), (0x14, "210"), (0x15, "Concept2"), (0x16, "0")]:
            add(info, short, ["read"], text.encode())
        add(control, 0x21, ["write", "write-without-response"])
        add(control, 0x22, ["notify"])
        for short in [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D]:
            add(rowing, short, ["read", "write"] if short == 0x34 else ["notify"], b"\x01" if short == 0x34 else b"")
        self.app = Application(bus, [info, control, rowing])
        self.name = "PM5 " + serial
        GLib.timeout_add_seconds(timeout, self.give_up)

    def start(self):
        manager = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter_path), "org.bluez.GattManager1")
        manager.RegisterApplication(self.app.path, {}, reply_handler=self.registered, error_handler=self.failed)

    def registered(self):
        self.advertise(True)

    def advertise(self, with_service):
        self.ad = Advertisement(self.bus, self.name, with_service)
        manager = dbus.Interface(self.bus.get_object(BLUEZ, self.adapter_path), "org.bluez.LEAdvertisingManager1")

        def refused(e):
            # Why again: the PM5 service's 128-bit UUID and the name may not fit 31 bytes
            # together; the name alone tells a PM5 too.
            if with_service:
                self.ad.remove_from_connection()
                self.advertise(False)
            else:
                self.failed(e)

        manager.RegisterAdvertisement(self.ad.path, {}, reply_handler=lambda: print("advertising" + (" (service and name)" if with_service else " (name)"), flush=True),
                                      error_handler=refused)

    def failed(self, e):
        print("error: %s" % e, flush=True)
        self.status = 1
        self.loop.quit()

    def give_up(self):
        print("error: timed out after %d of %d notifications" % (self.sent, len(self.events)), flush=True)
        self.status = 1
        self.loop.quit()
        return False

    def written(self, short, value):
        print("written 0x%02x %s" % (short, value.hex()), flush=True)

    def subscribed(self):
        if self.playing or not all(self.chars[s].notifying for s in NOTIFYING):
            return
        self.playing = True
        print("subscribed", flush=True)
        GLib.timeout_add(5, self.play)

    def play(self):
        # A few notifications every 5 ms: about as fast as a PM5 at its fastest rate with
        # several characteristics due at once.
        for _ in range(4):
            if self.sent >= len(self.events):
                print("sent %d" % self.sent, flush=True)
                self.status = 0
                return False
            short, data = self.events[self.sent]
            self.chars[short].notify(data)
            self.sent += 1
        return True


def read_log(path):
    events = []
    with open(path) as f:
        for line in f:
            if not line.startswith("N "):
                continue
            fields = dict(p.split("=", 1) for p in line.split()[1:])
            events.append((int(fields["c"], 16), bytes.fromhex(fields["v"])))
    return events


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--adapter", default="hci1")
    p.add_argument("--log", required=True)
    p.add_argument("--serial", default="430000009")
    p.add_argument("--timeout", type=int, default=120)
    a = p.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    loop = GLib.MainLoop()
    server = Server(bus, a.adapter, read_log(a.log), a.serial, loop, a.timeout)
    server.start()
    # Why unblock: a parent that blocks them in its spawning thread (a test runner's
    # Foundation.Process) passes its signal mask on.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for s in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, s, loop.quit)
    loop.run()
    print("stopped", flush=True)
    # Why not sys.exit: dbus-python's objects at interpreter exit can wait on the bus.
    os._exit(server.status)


if __name__ == "__main__":
    main()
