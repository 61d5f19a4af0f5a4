// asyncrl's TORCS driver module: hands the car's state to a Python process over a local
// TCP socket and drives with the steering, throttle and brake it answers.
//
// Protocol (native byte order, both ends on one machine):
//   greeting (driver -> python, on connecting): int32 magic, int32 version, then the race's
//     16-byte secret, which proves to python that this connection is its race's driver.
//   track (driver -> python, once per race): int32 n_points,
//     float64 track_length, float64 track_width, then n_points x 7 float64
//     (left x, y, z, right x, y, z, distance from the start line) sampled along the track.
//   state (driver -> python, after each action has been held for its repeat count):
//     STATE_DOUBLES float64, laid out as in state_layout.py.
//   action (python -> driver): float64 steer, accel, brake, repeat.
// The port comes from ASYNCRL_TORCS_PORT and the secret, as 32 hex digits, from
// ASYNCRL_TORCS_SECRET. If the Python end goes away, TORCS exits:
// a race nobody drives must not outlive its worker.

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <car.h>
#include <raceman.h>
#include <robot.h>
#include <robottools.h>
#include <tgf.h>
#include <track.h>

static const int MAGIC = 0x41524c54;  // "TLRA"
static const int VERSION = 2;
static const int SECRET_BYTES = 16;
static const int MAX_OPPONENTS = 16;
static const int OWN_DOUBLES = 24;
static const int OPPONENT_DOUBLES = 8;
static const int STATE_DOUBLES = OWN_DOUBLES + MAX_OPPONENTS * OPPONENT_DOUBLES;
static const double SAMPLE_SPACING = 2.0;  // metres between track samples

static int sock = -1;
static tTrack *track_ = NULL;
static int repeat_left = 0;
static double held_steer = 0.0, held_accel = 0.0, held_brake = 0.0;

static void die(const char *why) {
    fprintf(stderr, "asyncrl driver: %s\n", why);
    fflush(stderr);
    _exit(0);
}

static void send_all(const void *buf, size_t len) {
    const char *p = (const char *)buf;
    while (len > 0) {
        ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
        if (n <= 0) die("python end closed");
        p += n;
        len -= (size_t)n;
    }
}

static void recv_all(void *buf, size_t len) {
    char *p = (char *)buf;
    while (len > 0) {
        ssize_t n = recv(sock, p, len, 0);
        if (n <= 0) die("python end closed");
        p += n;
        len -= (size_t)n;
    }
}

static void send_greeting() {
    const char *hex = getenv("ASYNCRL_TORCS_SECRET");
    if (hex == NULL || strlen(hex) != 2 * (size_t)SECRET_BYTES)
        die("ASYNCRL_TORCS_SECRET is not set");
    unsigned char secret[SECRET_BYTES];
    for (int i = 0; i < SECRET_BYTES; i++) {
        unsigned int byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) die("ASYNCRL_TORCS_SECRET is not hex");
        secret[i] = (unsigned char)byte;
    }
    int greeting[2] = {MAGIC, VERSION};
    send_all(greeting, sizeof(greeting));
    send_all(secret, sizeof(secret));
}

static void connect_to_python() {
    const char *port = getenv("ASYNCRL_TORCS_PORT");
    if (port == NULL) die("ASYNCRL_TORCS_PORT is not set");
    sock = socket(AF_INET, SOCK_STREAM, 0);
    if (sock < 0) die("socket() failed");
    int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0) die("cannot connect to python");
    send_greeting();
}

// Both borders and the ground height, every SAMPLE_SPACING metres of the centre line.
static void send_track() {
    int n_points = 0;
    tTrackSeg *seg = track_->seg;
    for (int i = 0; i < track_->nseg; i++) {
        seg = seg->next;
        n_points += (int)ceil(seg->length / SAMPLE_SPACING);
    }
    double sizes[2] = {track_->length, track_->width};
    send_all(&n_points, sizeof(n_points));
    send_all(sizes, sizeof(sizes));
    double *points = (double *)malloc(sizeof(double) * 7 * (size_t)n_points);
    int k = 0;
    seg = track_->seg;
    for (int i = 0; i < track_->nseg; i++) {
        seg = seg->next;
        int steps = (int)ceil(seg->length / SAMPLE_SPACING);
        double span = seg->type == TR_STR ? seg->length : seg->arc;
        for (int j = 0; j < steps; j++) {
            tTrkLocPos pos;
            pos.seg = seg;
            pos.type = TR_LPOS_MAIN;
            pos.toStart = (tdble)(span * j / steps);
            double *row = points + 7 * k;
            for (int side = 0; side < 2; side++) {
                // RtTrackLocal2Global measures toMiddle positive to the left.
                pos.toMiddle = (tdble)((side == 0 ? 0.5 : -0.5) * seg->width);
                tdble x, y;
                RtTrackLocal2Global(&pos, &x, &y, TR_TOMIDDLE);
                pos.toRight = side == 0 ? seg->width : 0.0f;
                row[3 * side + 0] = x;
                row[3 * side + 1] = y;
                row[3 * side + 2] = RtTrackHeightL(&pos);
            }
            row[6] = seg->lgfromstart + seg->length * (double)j / steps;
            k++;
        }
    }
    send_all(points, sizeof(double) * 7 * (size_t)n_points);
    free(points);
}

static double normalise_angle(double a) {
    while (a > M_PI) a -= 2 * M_PI;
    while (a < -M_PI) a += 2 * M_PI;
    return a;
}

static void send_state(tCarElt *car, tSituation *s) {
    double st[STATE_DOUBLES];
    memset(st, 0, sizeof(st));
    tTrackSeg *seg = car->_trkPos.seg;
    st[0] = s->currentTime;
    st[1] = car->_pos_X;
    st[2] = car->_pos_Y;
    st[3] = car->_pos_Z;
    st[4] = car->_yaw;
    st[5] = car->_speed_x;
    st[6] = car->_speed_y;
    st[7] = normalise_angle(RtTrackSideTgAngleL(&car->_trkPos) - car->_yaw);
    st[8] = car->_trkPos.toMiddle;
    st[9] = seg->width;
    st[10] = car->_distFromStartLine;
    st[11] = car->_distRaced;
    st[12] = car->_laps;
    st[13] = car->_dammage;
    st[14] = car->_enginerpm;
    st[15] = car->_gear;
    st[16] = car->_pos;
    st[17] = car->_state;
    st[18] = car->_dimension_x;
    st[19] = car->_dimension_y;
    st[20] = car->_pitch;
    st[21] = car->_roll;
    st[22] = car->_curLapTime;
    int n = 0;
    for (int i = 0; i < s->_ncars && n < MAX_OPPONENTS; i++) {
        tCarElt *other = s->cars[i];
        if (other == car) continue;
        double *o = st + OWN_DOUBLES + OPPONENT_DOUBLES * n;
        o[0] = other->_pos_X;
        o[1] = other->_pos_Y;
        o[2] = other->_pos_Z;
        o[3] = other->_yaw;
        o[4] = other->_dimension_x;
        o[5] = other->_dimension_y;
        o[6] = other->_distFromStartLine;
        o[7] = other->_state;
        n++;
    }
    st[23] = n;
    send_all(st, sizeof(st));
}

// Shift up near the red line and down when the lower gear would still be below it.
static int choose_gear(tCarElt *car) {
    if (car->_gear <= 0) return 1;
    double wheel = car->_wheelRadius(REAR_RGT);
    double top = 0.9 * car->_enginerpmRedLine;
    double up_ratio = car->_gearRatio[car->_gear + car->_gearOffset];
    if (car->_gear < car->_gearNb - 1 - car->_gearOffset && car->_speed_x > top / up_ratio * wheel)
        return car->_gear + 1;
    if (car->_gear > 1) {
        double down_ratio = car->_gearRatio[car->_gear + car->_gearOffset - 1];
        if (car->_speed_x + 4.0 < top / down_ratio * wheel) return car->_gear - 1;
    }
    return car->_gear;
}

static void init_track(int, tTrack *track, void *, void **car_parm_handle, tSituation *) {
    track_ = track;
    *car_parm_handle = NULL;
}

static void new_race(int, tCarElt *, tSituation *) {
    connect_to_python();
    send_track();
    repeat_left = 0;
}

static void drive(int, tCarElt *car, tSituation *s) {
    memset(&car->ctrl, 0, sizeof(tCarCtrl));
    if (repeat_left <= 0) {
        send_state(car, s);
        double action[4];
        recv_all(action, sizeof(action));
        held_steer = action[0];
        held_accel = action[1];
        held_brake = action[2];
        repeat_left = action[3] < 1 ? 1 : (int)action[3];
    }
    repeat_left--;
    car->_steerCmd = (tdble)held_steer;
    car->_accelCmd = (tdble)held_accel;
    car->_brakeCmd = (tdble)held_brake;
    car->_gearCmd = choose_gear(car);
    car->_clutchCmd = 0.0f;
}

static int pit_command(int, tCarElt *, tSituation *) { return ROB_PIT_IM; }

static void end_race(int, tCarElt *, tSituation *) {}

static void shutdown(int) {
    if (sock >= 0) close(sock);
    sock = -1;
}

static int init_interface(int index, void *pt) {
    tRobotItf *itf = (tRobotItf *)pt;
    itf->rbNewTrack = init_track;
    itf->rbNewRace = new_race;
    itf->rbDrive = drive;
    itf->rbPitCmd = pit_command;
    itf->rbEndRace = end_race;
    itf->rbShutdown = shutdown;
    itf->index = index;
    return 0;
}

extern "C" int asyncrl(tModInfo *mod_info) {
    memset(mod_info, 0, 10 * sizeof(tModInfo));
    mod_info[0].name = strdup("asyncrl");
    mod_info[0].desc = strdup("driven by an asyncrl worker over a local socket");
    mod_info[0].fctInit = init_interface;
    mod_info[0].gfId = ROB_IDENT;
    mod_info[0].index = 0;
    return 0;
}
