// Interface strings in English, Indonesian and Vietnamese (the languages of the
// original documents), and the names of cards and table positions. The chosen
// language is kept in localStorage; every page re-renders when it changes.

const STRINGS = {
  en: {
    title: "Hearts Arena", lobby: "Lobby", leaderboard: "Leaderboard", language: "Language",
    live_matches: "Live matches", recent_matches: "Recent matches", nothing_yet: "Nothing here yet.", waiting: "Waiting, table",
    play_title: "Play against the house", ruleset: "Ruleset", players: "Players", opponent: "Opponent {n}",
    play_button: "Play against the house", watch: "Watch", replay: "Replay", deals_n: "{n} deals", deals_n_one: "{n} deal",
    matches_n: "{n} matches", matches_n_one: "{n} match", match_n: "Match {n}",
    deals_played_n: "{n} deals played", deals_played_n_one: "{n} deal played", rank_word: "Rank",
    ranked_by: "Ranked by the conservative rating (rating − 3 × uncertainty): a bot's rank rises as its matches make its rating surer, not by its rating alone.",
    withheld: "score held until its duplicate set ends",
    running: "running", finished: "finished", aborted: "aborted", cancelled: "cancelled",
    you: "You", cards_n: "{n} cards", points_n: "{n} pts", tricks_n: "{n} tricks",
    cards_n_one: "{n} card", points_n_one: "{n} pt", tricks_n_one: "{n} trick",
    // a seat as a screen reader hears it: {cards} is cards_n, {points} points_said_n (each with its singular)
    seat_label: "{name}, {position}: {cards}, {points}", points_said_n: "{n} points", points_said_n_one: "{n} point",
    your_hand: "Your hand", trick: "Trick {n}", the_trick: "The trick",
    pass_button: "Pass cards {direction}", to_position: "to {position}",
    pass_hint: "Lift {n} cards to pass {direction}.", pass_lifted: "{k} of {n} lifted.",
    pass_waiting: "Passed. Waiting for the others…", hold_deal: "No passing this deal.",
    received: "You received {cards}.",
    your_turn: "Your turn: play a marked card.", your_lead: "Your lead.", waiting_for: "Waiting for {name}…",
    leads: "{name} leads", wins_trick: "{name} wins the trick ({points} pts)",
    you_lead: "You lead", you_win_trick: "You win the trick ({points} pts)",
    wins_trick_one: "{name} wins the trick ({points} pt)", you_win_trick_one: "You win the trick ({points} pt)",
    hearts_broken: "Hearts broken", hearts_not_broken: "Hearts not broken",
    clock: "Time left", bank: "bank {s}", seconds: "{s} s",
    score: "Score", deal: "Deal", deals: "Deals", deal_n: "Deal {n}", total: "Total", moon_mark: "shot the moon",
    moon_title: "You shot the moon!", moon_text: "You took every penalty card. Choose how it scores:",
    moon_add_to_others: "Add {n} to everyone else", moon_subtract_from_self: "Subtract {n} from your score",
    default_choice: "(default if time runs out)",
    result_title: "Match over", winner: "Winner: {names}", winners: "Winners: {names}", you_won: "You won!",
    rank_n: "You finished {rank} of {n}.", final_totals: "Final totals:",
    final_rank: "{name}: {points} (rank {rank})", final_points: "{name}: {points}", ended_because: "The match ended: {reason}.",
    refused: "Refused: {reason}", watch_replay: "Watch the replay", back_to_lobby: "Back to the lobby",
    connecting: "Connecting…", reconnecting: "Connection lost, reconnecting…",
    said_then: "{first}. {then}", played_card: "{name} played {card}", passed_cards: "{name} passed {cards}", chose_moon: "{name} chose: {option}",
    dealt: "Deal {n} dealt", live: "Live", delayed: "Delayed", offline: "Offline", replay_mode: "Replay",
    step_back: "Step back", step_forward: "Step forward", play: "Play", pause: "Pause", speed: "Speed",
    prev_deal: "Previous deal", next_deal: "Next deal", jump_deal: "Deal", jump_trick: "Trick",
    trick_start: "Start of deal", trick_after: "After trick {n}", frame_n: "Step {k} of {n}",
    provenance: "Provenance", think_ms: "{ms} ms",
    prov_bot: "bot", prov_house: "house bot", prov_human: "person", prov_timeout: "timeout (default)",
    prov_illegal: "illegal answers (default)", prov_disconnect: "disconnected (default)", prov_auto: "auto-played (default)",
    rejected_n: "{n} rejected", no_live_cards: "No hidden card is ever shown here while the match runs.",
    delay_status: "Deal {n}, {s} s after it ended",
    set_status: "Deal {n}, once every table of its duplicate set has played it",
    round_table: "Round {round}, table {table}",
    shared_owner: "Round {round}: {names} share a table, bots of one owner ({owner}); the roster left no other way",
    set_note: "A duplicate set: its tables play the same cards, so each deal is shown once all of them have played it. No hidden card is shown.",
    delayed_note: "Each deal is shown with every hand once it has ended and {s} s have passed.",
    bot: "Bot", owner: "Owner", rating: "Rating", uncertainty: "±", conservative: "Conservative",
    matches: "Matches", points_per_deal: "Points/deal", reliability: "Reliability", unreliable: "unreliable", revoked: "revoked",
    rank: "#", no_ratings: "No rated matches in this ruleset yet.",
    not_on_ladder: "Not on the ladder: this bot plays in tournaments (their standings are on the leaderboard page).", tournaments: "Tournaments",
    no_tournaments: "No tournaments yet.", rating_over_time: "Rating over time (band: ± uncertainty)",
    chart_legend: "Solid line: the rating after each rated match (across: the bot's matches, counted from 1). Band: ± its uncertainty. Dashed line: the conservative rating (rating − 3 × uncertainty), by which the leaderboard ranks.",
    decisions: "Decisions", timeouts: "Timeouts", illegal_defaults: "Illegal-answer defaults",
    disconnect_defaults: "Disconnect defaults", auto_defaults: "Auto-played defaults", defaults: "Defaults", latest_matches: "Latest rated matches", match: "Match",
    seat: "Seat", points: "Points", not_found: "Not found.", page_not_found: "Not found",
    unknown_ruleset: "Unknown ruleset", no_such_ruleset: "There is no ruleset named “{name}”.",
    no_such_table: "There is no table “{id}”: no match ever had this id here.",
    no_cards_played: "No card was played in this match.", no_page_here: "There is no page at this address.",
    no_such_match: "There is no match “{id}”.", no_such_bot: "There is no bot named “{name}”.", error: "Error: {message}",
    opponents_hint: "House bots: {names}.", phase_passing: "Passing", phase_playing: "Playing",
    phase_over: "Over", decision_time: "A person has {s} s per decision, and {bank} s more for the whole match when a decision takes longer.",
    decision_time_no_bank: "A person has {s} s per decision.", paused: "paused",
    auto_playing: "Your time ran out several times: the server is playing your cards for you.",
    take_back: "I'm back: let me play", elsewhere: "This seat is open in another tab or window.",
    play_here: "Play here instead", resume: "Resume",
    watch_heading: "Match {id}", play_heading: "Your seat in match {id}",
    play_page: "Your seat", guest: "Guest {id}", house_seat: "{name} (house, seat {n})", house_seat_short: "{name}, seat {n}", not_playable: "{card} cannot be played now: {reason}.",
    pass_full: "You pass {n} cards: lower one first.", play_marked: "play a marked card",
    why_follow_suit: "you must follow {suit}", why_first_trick: "no point cards on the first trick",
    why_first_lead: "the first lead must be {card}", why_hearts_not_broken: "hearts are not broken yet",
    why_lead_queen: "with only hearts and the queen of spades, lead the queen of spades",
    defaulted_timeout: "Time ran out", defaulted_auto: "Auto-play", defaulted_disconnect: "While you were away",
    defaulted_illegal: "Too many refused answers", defaulted_pass: "{why}: the server passed {cards} for you.",
    defaulted_pass_unseen: "{why}: the server passed {n} cards for you; you will see which once everyone has passed.",
    defaulted_play: "{why}: the server played {card} for you.", defaulted_moon: "{why}: the server chose for you: {option}.",
    defaulted_other: "{why}: the server decided for you.",
    leave_button: "Leave table", leave_title: "Leave this table?",
    leave_text: "The match ends now for everyone and is recorded as cancelled. You cannot come back to it.",
    leave_confirm: "Leave and end the match", leave_stay: "Stay and play",
    you_left: "You left the table: the match is over (recorded as cancelled).",
    waited_for_seats: "waited {s} s for the seats: {reason}",
    kept_play: "Not connected: {what} will be played as soon as the connection is back.",
    kept_pass: "Not connected: {what} will be passed as soon as the connection is back.",
    kept_moon: "Not connected: your choice ({what}) will be sent as soon as the connection is back.",
    unsent_play: "Not sent: {what} was for a decision that is over (the server made it).",
    unsent_pass: "Not sent: the pass of {what} was for a decision that is over (the server made it).",
    unsent_moon: "Not sent: your choice ({what}) was for a decision that is over (the server made it).",
    clock_low_pass: "{s} seconds left to pass your cards.", clock_low_pass_one: "{s} second left to pass your cards.",
    clock_low_play: "{s} seconds left to play a card.", clock_low_play_one: "{s} second left to play a card.",
    clock_low_moon: "{s} seconds left to choose.", clock_low_moon_one: "{s} second left to choose.",
    seats_not_free: "{reason} (the seats were not free: {why})",
  },
  id: {
    title: "Hearts Arena", lobby: "Lobi", leaderboard: "Papan peringkat", language: "Bahasa",
    live_matches: "Pertandingan langsung", recent_matches: "Pertandingan terakhir", nothing_yet: "Belum ada apa-apa.", waiting: "Menunggu, meja",
    play_title: "Main melawan bot rumah", ruleset: "Aturan", players: "Pemain", opponent: "Lawan {n}",
    play_button: "Main melawan bot rumah", watch: "Tonton", replay: "Tayangan ulang", deals_n: "{n} ronde",
    matches_n: "{n} pertandingan", match_n: "Pertandingan {n}", deals_played_n: "{n} ronde dimainkan", rank_word: "Peringkat",
    ranked_by: "Diurutkan menurut rating konservatif (rating − 3 × ketidakpastian): peringkat bot naik saat pertandingannya membuat ratingnya makin pasti, bukan menurut ratingnya saja.",
    withheld: "skor ditahan sampai set duplikatnya selesai",
    running: "berjalan", finished: "selesai", aborted: "dibatalkan server", cancelled: "dibatalkan",
    you: "Kamu", cards_n: "{n} kartu", points_n: "{n} poin", tricks_n: "{n} trik",
    seat_label: "{name}, {position}: {cards}, {points}", points_said_n: "{n} poin",
    your_hand: "Kartu di tanganmu", trick: "Trik {n}", the_trick: "Trik",
    pass_button: "Oper kartu {direction}", to_position: "ke {position}",
    pass_hint: "Angkat {n} kartu untuk dioper {direction}.", pass_lifted: "{k} dari {n} terangkat.",
    pass_waiting: "Sudah dioper. Menunggu pemain lain…", hold_deal: "Ronde ini tanpa oper kartu.",
    received: "Kamu menerima {cards}.",
    your_turn: "Giliranmu: mainkan kartu yang ditandai.", your_lead: "Kamu membuka trik.", waiting_for: "Menunggu {name}…",
    leads: "{name} membuka", wins_trick: "{name} memenangkan trik ({points} poin)",
    you_lead: "Kamu membuka", you_win_trick: "Kamu memenangkan trik ({points} poin)",
    hearts_broken: "Hati sudah dibuka", hearts_not_broken: "Hati belum dibuka",
    clock: "Sisa waktu", bank: "cadangan {s}", seconds: "{s} dtk",
    score: "Skor", deal: "Ronde", deals: "Jumlah ronde", deal_n: "Ronde {n}", total: "Total", moon_mark: "tembak bulan",
    moon_title: "Kamu tembak bulan!", moon_text: "Kamu mendapat semua kartu penalti. Pilih cara menghitungnya:",
    moon_add_to_others: "Tambahkan {n} ke semua lawan", moon_subtract_from_self: "Kurangi skormu {n}",
    default_choice: "(bawaan jika waktu habis)",
    result_title: "Pertandingan selesai", winner: "Pemenang: {names}", winners: "Pemenang: {names}", you_won: "Kamu menang!",
    rank_n: "Kamu di peringkat {rank} dari {n}.", final_totals: "Total akhir:",
    final_rank: "{name}: {points} (peringkat {rank})", final_points: "{name}: {points}", ended_because: "Pertandingan berakhir: {reason}.",
    refused: "Ditolak: {reason}", watch_replay: "Tonton tayangan ulang", back_to_lobby: "Kembali ke lobi",
    connecting: "Menghubungkan…", reconnecting: "Koneksi terputus, menghubungkan lagi…",
    said_then: "{first}. {then}", played_card: "{name} memainkan {card}", passed_cards: "{name} mengoper {cards}", chose_moon: "{name} memilih: {option}",
    dealt: "Ronde {n} dibagikan", live: "Langsung", delayed: "Tertunda", offline: "Terputus", replay_mode: "Tayangan ulang",
    step_back: "Mundur", step_forward: "Maju", play: "Putar", pause: "Jeda", speed: "Kecepatan",
    prev_deal: "Ronde sebelumnya", next_deal: "Ronde berikutnya", jump_deal: "Ronde", jump_trick: "Trik",
    trick_start: "Awal ronde", trick_after: "Setelah trik {n}", frame_n: "Langkah {k} dari {n}",
    provenance: "Asal keputusan", think_ms: "{ms} md",
    prov_bot: "bot", prov_house: "bot rumah", prov_human: "orang", prov_timeout: "waktu habis (bawaan)",
    prov_illegal: "jawaban tidak sah (bawaan)", prov_disconnect: "terputus (bawaan)", prov_auto: "dimainkan otomatis (bawaan)",
    rejected_n: "{n} ditolak", no_live_cards: "Selama pertandingan berjalan, tidak ada kartu tersembunyi yang ditampilkan.",
    delay_status: "Ronde {n}, {s} s setelah berakhir",
    set_status: "Ronde {n}, setelah semua meja set duplikatnya memainkannya",
    round_table: "Babak {round}, meja {table}",
    shared_owner: "Babak {round}: {names} berbagi meja, bot dari satu pemilik ({owner}); susunan peserta tidak memberi cara lain",
    set_note: "Set duplikat: mejanya memainkan kartu yang sama, jadi setiap ronde ditampilkan setelah semua meja memainkannya. Tidak ada kartu tersembunyi yang ditampilkan.",
    delayed_note: "Setiap ronde ditampilkan dengan semua kartu setelah selesai dan {s} s berlalu.",
    bot: "Bot", owner: "Pemilik", rating: "Rating", uncertainty: "±", conservative: "Konservatif",
    matches: "Pertandingan", points_per_deal: "Poin/ronde", reliability: "Keandalan", unreliable: "tidak andal", revoked: "dicabut",
    rank: "#", no_ratings: "Belum ada pertandingan berperingkat untuk aturan ini.",
    not_on_ladder: "Tidak ada di tangga peringkat: bot ini bermain di turnamen (klasemennya ada di halaman papan peringkat).", tournaments: "Turnamen",
    no_tournaments: "Belum ada turnamen.", rating_over_time: "Rating dari waktu ke waktu (pita: ± ketidakpastian)",
    chart_legend: "Garis utuh: rating setelah setiap pertandingan berperingkat (mendatar: pertandingan bot ini, dihitung dari 1). Pita: ± ketidakpastiannya. Garis putus-putus: rating konservatif (rating − 3 × ketidakpastian), yang dipakai papan peringkat untuk mengurutkan.",
    decisions: "Keputusan", timeouts: "Waktu habis", illegal_defaults: "Bawaan karena jawaban tidak sah",
    disconnect_defaults: "Bawaan karena terputus", auto_defaults: "Bawaan dimainkan otomatis", defaults: "Bawaan", latest_matches: "Pertandingan berperingkat terakhir", match: "Pertandingan",
    seat: "Kursi", points: "Poin", not_found: "Tidak ditemukan.", page_not_found: "Tidak ditemukan",
    unknown_ruleset: "Aturan tidak dikenal", no_such_ruleset: "Tidak ada aturan bernama “{name}”.",
    no_such_table: "Tidak ada meja “{id}”: tidak pernah ada pertandingan dengan id ini di sini.",
    no_cards_played: "Tidak ada kartu yang dimainkan di pertandingan ini.", no_page_here: "Tidak ada halaman di alamat ini.",
    no_such_match: "Tidak ada pertandingan “{id}”.", no_such_bot: "Tidak ada bot bernama “{name}”.", error: "Galat: {message}",
    opponents_hint: "Bot rumah: {names}.", phase_passing: "Oper kartu", phase_playing: "Bermain",
    phase_over: "Selesai", decision_time: "Seorang pemain punya {s} dtk per keputusan, dan {bank} dtk lagi untuk seluruh pertandingan bila satu keputusan lebih lama.",
    decision_time_no_bank: "Seorang pemain punya {s} dtk per keputusan.", paused: "dijeda",
    auto_playing: "Waktumu habis beberapa kali: server memainkan kartumu untukmu.",
    take_back: "Saya kembali: biar saya main", elsewhere: "Kursi ini terbuka di tab atau jendela lain.",
    play_here: "Main di sini saja", resume: "Lanjutkan",
    watch_heading: "Pertandingan {id}", play_heading: "Kursimu di pertandingan {id}",
    play_page: "Kursimu", guest: "Tamu {id}", house_seat: "{name} (bot rumah, kursi {n})", house_seat_short: "{name}, kursi {n}", not_playable: "{card} tidak bisa dimainkan sekarang: {reason}.",
    pass_full: "Kamu mengoper {n} kartu: turunkan satu dulu.", play_marked: "mainkan kartu yang ditandai",
    why_follow_suit: "kamu harus mengikuti {suit}", why_first_trick: "kartu poin tidak boleh dimainkan di trik pertama",
    why_first_lead: "kartu pembuka pertama harus {card}", why_hearts_not_broken: "hati belum dibuka",
    why_lead_queen: "jika hanya ada hati dan Queen sekop, buka dengan Queen sekop",
    defaulted_timeout: "Waktu habis", defaulted_auto: "Main otomatis", defaulted_disconnect: "Saat kamu pergi",
    defaulted_illegal: "Terlalu banyak jawaban ditolak", defaulted_pass: "{why}: server mengoper {cards} untukmu.",
    defaulted_pass_unseen: "{why}: server mengoper {n} kartu untukmu; kartunya terlihat setelah semua pemain mengoper.",
    defaulted_play: "{why}: server memainkan {card} untukmu.", defaulted_moon: "{why}: server memilih untukmu: {option}.",
    defaulted_other: "{why}: server memutuskan untukmu.",
    leave_button: "Tinggalkan meja", leave_title: "Tinggalkan meja ini?",
    leave_text: "Pertandingan langsung berakhir untuk semua pemain dan dicatat sebagai dibatalkan. Kamu tidak bisa kembali.",
    leave_confirm: "Tinggalkan dan akhiri pertandingan", leave_stay: "Tetap bermain",
    you_left: "Kamu meninggalkan meja: pertandingan selesai (dicatat sebagai dibatalkan).",
    refusal_unreachable: "server tidak dapat dihubungi; periksa koneksimu, lalu coba lagi",
    refusal_not_answering: "server tidak menjawab (HTTP {status}); coba lagi sebentar lagi",
    refusal_no_seat: "kamu tidak punya kursi di pertandingan itu (mungkin sudah selesai: lihat tayangan ulangnya)",
    refusal_not_your_seat: "kursi ini milik orang yang mengambilnya; kamu bisa menonton pertandingannya",
    refusal_tables_full: "semua meja untuk pemain sedang terpakai; coba lagi beberapa menit lagi",
    refusal_tables_per_peer: "kamu sudah memainkan pertandingan sebanyak yang diizinkan di sini; selesaikan satu dulu",
    refusal_tables_per_network: "terlalu banyak meja dimainkan dari jaringanmu; selesaikan satu, atau coba lagi nanti",
    refusal_over_already: "pertandingan sudah selesai",
    refusal_too_many: "terlalu banyak permintaan dari alamatmu; tunggu sebentar, lalu coba lagi",
    refusal_other_site: "permintaan dari situs lain ditolak",
    refusal_too_many_connections: "terlalu banyak koneksi dari alamatmu; tutup beberapa tab, lalu coba lagi",
    refusal_host_not_allowed: "server web ini mengambil kursi hanya di bawah nama yang diizinkan operatornya (nama lokal, dan yang ada di web_hosts); buka lewat salah satunya",
    rejected_stale_request: "terlambat: keputusan itu sudah diambil (sudah dijawab, atau dimainkan untukmu saat waktu habis)",
    rejected_unknown_request: "permintaan itu tidak dikirim ke kursi ini",
    rejected_unknown_match: "kursi ini tidak bermain di pertandingan itu",
    rejected_malformed: "jawaban itu tidak berbentuk jawaban yang sah",
    end_shutdown: "server dimatikan", end_interrupted: "server berhenti saat pertandingan berjalan",
    end_admin: "dibatalkan oleh admin", end_server_error: "galat server",
    end_not_stored: "galat server: hasilnya tidak bisa disimpan", end_left: "pemain meninggalkan meja",
    end_left_away: "pemain meninggalkan meja (tidak ada halaman selama {s} dtk)",
    end_unplayed: "tidak ada yang bermain di meja dalam {s} dtk setelah mengambilnya",
    end_tournament_cancelled: "turnamennya dibatalkan",
    end_interrupted_elsewhere: "server berhenti saat pertandingan berjalan (instans {instance}, yang proses servernya tidak berjalan lagi)",
    end_shuffle_repeated: "kocokan pertandingan ini pernah dibagikan sebelumnya",
    end_not_reserved: "galat server: kocokan berikutnya tidak bisa dipesan",
    end_conformance_timeout: "waktu pemeriksaan kesesuaian habis",
    refusal_no_match: "tidak ada pertandingan dengan id itu",
    refusal_set_running: "meja lain dari set duplikat pertandingan ini masih dimainkan dengan kartu yang sama; catatan dan tayangan ulangnya tersedia setelah semua meja selesai",
    refusal_running: "pertandingan masih berjalan; catatannya tersedia setelah selesai",
    refusal_running_elsewhere: "pertandingan masih berjalan di server lain; catatannya tersedia setelah selesai",
    refusal_no_record: "pertandingan ini tidak punya catatan (servernya berhenti sebelum catatan pertamanya disimpan)",
    refusal_over: "pertandingan sudah selesai", refusal_no_events: "tidak ada kejadian yang disimpan untuk pertandingan ini",
    refusal_shutting_down: "server sedang dimatikan",
    refusal_standings_unavailable: "klasemen tidak bisa dihitung sekarang; coba lagi nanti",
    refusal_damaged: "catatan tersimpan pertandingan ini rusak atau telah diubah; operator server sudah diberi tahu",
    refusal_internal: "galat internal server",
    wait_not_connected: "bot “{bot}” tidak terhubung",
    wait_not_frozen_version: "bot “{bot}” tidak terhubung dengan versi yang dibekukan saat turnamen dimulai, “{version}”",
    wait_not_playing_ruleset: "bot “{bot}” tidak memainkan aturan {ruleset}",
    wait_draining: "bot “{bot}” sedang dihentikan: ia menyelesaikan pertandingan yang berjalan dan tidak mengambil yang baru",
    wait_busy: "bot “{bot}” sedang sibuk di pertandingan lain", wait_back: "bot “{bot}” sudah kembali: kursinya ditunggu lagi",
    wait_shutting_down: "server sedang dimatikan",
    wait_not_seated: "bot-botnya belum bisa didudukkan (log server menjelaskan sebabnya)",
    waited_for_seats: "sudah menunggu kursinya {s} dtk: {reason}",
    kept_play: "Tidak terhubung: {what} akan dimainkan begitu koneksi kembali.",
    kept_pass: "Tidak terhubung: {what} akan dioper begitu koneksi kembali.",
    kept_moon: "Tidak terhubung: pilihanmu ({what}) akan dikirim begitu koneksi kembali.",
    unsent_play: "Tidak terkirim: {what} untuk keputusan yang sudah lewat (server yang memutuskan).",
    unsent_pass: "Tidak terkirim: operan {what} untuk keputusan yang sudah lewat (server yang memutuskan).",
    unsent_moon: "Tidak terkirim: pilihanmu ({what}) untuk keputusan yang sudah lewat (server yang memutuskan).",
    clock_low_pass: "Sisa {s} detik untuk mengoper kartu.", clock_low_play: "Sisa {s} detik untuk memainkan kartu.",
    clock_low_moon: "Sisa {s} detik untuk memilih.",
    seats_not_free: "{reason} (kursinya belum tersedia: {why})",
  },
  vi: {
    title: "Hearts Arena", lobby: "Sảnh", leaderboard: "Bảng xếp hạng", language: "Ngôn ngữ",
    live_matches: "Trận đang diễn ra", recent_matches: "Trận gần đây", nothing_yet: "Chưa có gì.", waiting: "Đang chờ, bàn",
    play_title: "Chơi với máy", ruleset: "Luật chơi", players: "Số người", opponent: "Đối thủ {n}",
    play_button: "Chơi với máy", watch: "Xem", replay: "Xem lại", deals_n: "{n} ván",
    matches_n: "{n} trận", match_n: "Trận {n}", deals_played_n: "đã chơi {n} ván", rank_word: "Hạng",
    ranked_by: "Xếp theo điểm thận trọng (điểm − 3 × độ bất định): hạng của bot tăng khi các trận làm điểm của nó chắc chắn hơn, không chỉ theo điểm.",
    withheld: "điểm được giữ lại đến khi bộ ván trùng lặp kết thúc",
    running: "đang chơi", finished: "đã xong", aborted: "bị huỷ do máy chủ", cancelled: "bị huỷ",
    you: "Bạn", cards_n: "{n} lá", points_n: "{n} điểm", tricks_n: "{n} vòng",
    seat_label: "{name}, {position}: {cards}, {points}", points_said_n: "{n} điểm",
    your_hand: "Bài trên tay bạn", trick: "Vòng {n}", the_trick: "Vòng bài",
    pass_button: "Chuyền bài {direction}", to_position: "cho {position}",
    pass_hint: "Nhấc {n} lá để chuyền {direction}.", pass_lifted: "Đã nhấc {k}/{n} lá.",
    pass_waiting: "Đã chuyền. Đang chờ người khác…", hold_deal: "Ván này không chuyền bài.",
    received: "Bạn nhận được {cards}.",
    your_turn: "Đến lượt bạn: đánh một lá được đánh dấu.", your_lead: "Bạn đánh trước.", waiting_for: "Đang chờ {name}…",
    leads: "{name} đánh trước", wins_trick: "{name} thắng vòng ({points} điểm)",
    you_lead: "Bạn đánh trước", you_win_trick: "Bạn thắng vòng ({points} điểm)",
    hearts_broken: "Đã mở cơ", hearts_not_broken: "Chưa mở cơ",
    clock: "Thời gian còn", bank: "dự trữ {s}", seconds: "{s} giây",
    score: "Điểm", deal: "Ván", deals: "Số ván", deal_n: "Ván {n}", total: "Tổng", moon_mark: "ăn trọn",
    moon_title: "Bạn đã ăn trọn!", moon_text: "Bạn ăn hết các lá bài phạt. Chọn cách tính điểm:",
    moon_add_to_others: "Cộng {n} cho mọi người khác", moon_subtract_from_self: "Trừ {n} điểm của bạn",
    default_choice: "(mặc định nếu hết giờ)",
    result_title: "Trận đấu kết thúc", winner: "Người thắng: {names}", winners: "Người thắng: {names}", you_won: "Bạn thắng!",
    rank_n: "Bạn xếp hạng {rank} trên {n}.", final_totals: "Tổng điểm cuối:",
    final_rank: "{name}: {points} (hạng {rank})", final_points: "{name}: {points}", ended_because: "Trận đấu kết thúc: {reason}.",
    refused: "Bị từ chối: {reason}", watch_replay: "Xem lại trận", back_to_lobby: "Về sảnh",
    connecting: "Đang kết nối…", reconnecting: "Mất kết nối, đang kết nối lại…",
    said_then: "{first}. {then}", played_card: "{name} đánh {card}", passed_cards: "{name} chuyền {cards}", chose_moon: "{name} chọn: {option}",
    dealt: "Chia ván {n}", live: "Trực tiếp", delayed: "Trễ", offline: "Mất kết nối", replay_mode: "Xem lại",
    step_back: "Lùi một bước", step_forward: "Tiến một bước", play: "Phát", pause: "Tạm dừng", speed: "Tốc độ",
    prev_deal: "Ván trước", next_deal: "Ván sau", jump_deal: "Ván", jump_trick: "Vòng",
    trick_start: "Đầu ván", trick_after: "Sau vòng {n}", frame_n: "Bước {k}/{n}",
    provenance: "Nguồn gốc", think_ms: "{ms} ms",
    prov_bot: "bot", prov_house: "máy", prov_human: "người chơi", prov_timeout: "hết giờ (mặc định)",
    prov_illegal: "trả lời sai luật (mặc định)", prov_disconnect: "mất kết nối (mặc định)", prov_auto: "tự động (mặc định)",
    rejected_n: "{n} lần bị từ chối", no_live_cards: "Khi trận đang diễn ra, không lá bài ẩn nào được hiện ở đây.",
    delay_status: "Ván {n}, {s} giây sau khi kết thúc",
    set_status: "Ván {n}, khi mọi bàn của bộ trùng lặp đã chơi xong",
    round_table: "Vòng {round}, bàn {table}",
    shared_owner: "Vòng {round}: {names} ngồi chung bàn, là bot của cùng một chủ ({owner}); danh sách tham gia không cho cách nào khác",
    set_note: "Bộ trùng lặp: các bàn chơi cùng những lá bài, nên mỗi ván được chiếu khi mọi bàn đã chơi xong. Không lá bài ẩn nào được hiện.",
    delayed_note: "Mỗi ván được chiếu với mọi lá bài khi đã kết thúc và sau {s} giây.",
    bot: "Bot", owner: "Chủ", rating: "Điểm xếp hạng", uncertainty: "±", conservative: "Thận trọng",
    matches: "Số trận", points_per_deal: "Điểm/ván", reliability: "Độ tin cậy", unreliable: "không ổn định", revoked: "đã thu hồi",
    rank: "#", no_ratings: "Chưa có trận xếp hạng nào cho luật này.",
    not_on_ladder: "Không có trên bảng xếp hạng: bot này chỉ thi đấu trong các giải đấu (kết quả ở trang bảng xếp hạng).", tournaments: "Giải đấu",
    no_tournaments: "Chưa có giải đấu nào.", rating_over_time: "Điểm xếp hạng theo thời gian (dải: ± độ bất định)",
    chart_legend: "Đường liền: điểm xếp hạng sau mỗi trận tính điểm (trục ngang: các trận của bot, đếm từ 1). Dải: ± độ bất định. Đường nét đứt: điểm thận trọng (điểm − 3 × độ bất định), bảng xếp hạng xếp thứ tự theo điểm này.",
    decisions: "Quyết định", timeouts: "Hết giờ", illegal_defaults: "Mặc định do trả lời sai luật",
    disconnect_defaults: "Mặc định do mất kết nối", auto_defaults: "Mặc định do tự động chơi", defaults: "Mặc định", latest_matches: "Các trận xếp hạng gần đây", match: "Trận",
    seat: "Ghế", points: "Điểm", not_found: "Không tìm thấy.", page_not_found: "Không tìm thấy",
    unknown_ruleset: "Luật chơi không tồn tại", no_such_ruleset: "Không có luật chơi nào tên “{name}”.",
    no_such_table: "Không có bàn “{id}”: chưa từng có trận nào mang mã này ở đây.",
    no_cards_played: "Không lá bài nào được đánh trong trận này.", no_page_here: "Không có trang nào ở địa chỉ này.",
    no_such_match: "Không có trận “{id}”.", no_such_bot: "Không có bot nào tên “{name}”.", error: "Lỗi: {message}",
    opponents_hint: "Máy: {names}.", phase_passing: "Chuyền bài", phase_playing: "Đang chơi",
    phase_over: "Kết thúc", decision_time: "Người chơi có {s} giây cho mỗi quyết định, và thêm {bank} giây cho cả trận khi một quyết định lâu hơn.",
    decision_time_no_bank: "Người chơi có {s} giây cho mỗi quyết định.", paused: "tạm dừng",
    auto_playing: "Bạn đã hết giờ nhiều lần: máy chủ đang đánh bài thay bạn.",
    take_back: "Tôi đã quay lại: để tôi chơi", elsewhere: "Ghế này đang mở ở một thẻ hoặc cửa sổ khác.",
    play_here: "Chơi ở đây", resume: "Tiếp tục",
    watch_heading: "Trận {id}", play_heading: "Ghế của bạn trong trận {id}",
    play_page: "Ghế của bạn", guest: "Khách {id}", house_seat: "{name} (máy, ghế {n})", house_seat_short: "{name}, ghế {n}", not_playable: "Không thể đánh {card} lúc này: {reason}.",
    pass_full: "Bạn chuyền {n} lá: hãy hạ một lá xuống trước.", play_marked: "hãy đánh một lá được đánh dấu",
    why_follow_suit: "bạn phải đánh theo chất {suit}", why_first_trick: "không được đánh lá có điểm ở vòng đầu tiên",
    why_first_lead: "lá mở đầu tiên phải là {card}", why_hearts_not_broken: "chưa mở cơ",
    why_lead_queen: "khi chỉ còn cơ và Q bích, hãy mở bằng Q bích",
    defaulted_timeout: "Hết giờ", defaulted_auto: "Tự động chơi", defaulted_disconnect: "Khi bạn vắng mặt",
    defaulted_illegal: "Quá nhiều câu trả lời bị từ chối", defaulted_pass: "{why}: máy chủ đã chuyền {cards} thay bạn.",
    defaulted_pass_unseen: "{why}: máy chủ đã chuyền {n} lá thay bạn; bạn sẽ thấy đó là lá nào khi mọi người chuyền xong.",
    defaulted_play: "{why}: máy chủ đã đánh {card} thay bạn.", defaulted_moon: "{why}: máy chủ đã chọn thay bạn: {option}.",
    defaulted_other: "{why}: máy chủ đã quyết định thay bạn.",
    leave_button: "Rời bàn", leave_title: "Rời bàn này?",
    leave_text: "Trận đấu kết thúc ngay cho mọi người và được ghi là bị huỷ. Bạn không thể quay lại.",
    leave_confirm: "Rời bàn và kết thúc trận", leave_stay: "Ở lại chơi",
    you_left: "Bạn đã rời bàn: trận đấu kết thúc (được ghi là bị huỷ).",
    refusal_unreachable: "không kết nối được với máy chủ; hãy kiểm tra kết nối mạng rồi thử lại",
    refusal_not_answering: "máy chủ không trả lời (HTTP {status}); hãy thử lại sau một lát",
    refusal_no_seat: "bạn không có ghế trong trận đó (có thể trận đã xong: xem lại trận)",
    refusal_not_your_seat: "ghế này thuộc về người đã nhận nó; bạn có thể xem trận đấu",
    refusal_tables_full: "mọi bàn dành cho người chơi đều đã có người; hãy thử lại sau vài phút",
    refusal_tables_per_peer: "bạn đã chơi số trận tối đa được phép ở đây; hãy chơi xong một trận trước",
    refusal_tables_per_network: "có quá nhiều bàn đang được chơi từ mạng của bạn; hãy chơi xong một trận, hoặc thử lại sau",
    refusal_over_already: "trận đấu đã kết thúc",
    refusal_too_many: "quá nhiều yêu cầu từ địa chỉ của bạn; hãy đợi một lát rồi thử lại",
    refusal_other_site: "yêu cầu từ trang web khác bị từ chối",
    refusal_too_many_connections: "quá nhiều kết nối từ địa chỉ của bạn; hãy đóng bớt vài thẻ rồi thử lại",
    refusal_host_not_allowed: "máy chủ web này chỉ nhận ghế dưới những tên mà người vận hành cho phép (tên cục bộ, và các tên trong web_hosts); hãy mở trang bằng một trong các tên đó",
    rejected_stale_request: "quá muộn: quyết định đó đã được đưa ra (đã trả lời, hoặc máy chủ đã đánh thay bạn khi hết giờ)",
    rejected_unknown_request: "yêu cầu đó không được gửi cho ghế này",
    rejected_unknown_match: "ghế này không chơi trong trận đó",
    rejected_malformed: "câu trả lời đó không đúng dạng một câu trả lời hợp lệ",
    end_shutdown: "máy chủ đã tắt", end_interrupted: "máy chủ dừng khi trận đang diễn ra",
    end_admin: "bị quản trị viên huỷ", end_server_error: "lỗi máy chủ",
    end_not_stored: "lỗi máy chủ: không lưu được kết quả", end_left: "người chơi đã rời bàn",
    end_left_away: "người chơi đã rời bàn (không mở trang trong {s} giây)",
    end_unplayed: "không ai chơi ở bàn trong {s} giây sau khi nhận bàn",
    end_tournament_cancelled: "giải đấu đã bị huỷ",
    end_interrupted_elsewhere: "máy chủ dừng khi trận đang diễn ra (instance {instance}: tiến trình máy chủ của nó không còn chạy)",
    end_shuffle_repeated: "một lần xáo bài của trận này đã từng được chia trước đó",
    end_not_reserved: "lỗi máy chủ: không đặt trước được các lần xáo bài tiếp theo",
    end_conformance_timeout: "kiểm tra tuân thủ đã hết giờ",
    refusal_no_match: "không có trận nào mang mã đó",
    refusal_set_running: "một bàn khác trong bộ trùng lặp của trận này vẫn đang chơi với cùng những lá bài; bản ghi và phần xem lại sẽ có khi mọi bàn đã xong",
    refusal_running: "trận đấu vẫn đang diễn ra; bản ghi sẽ có khi trận kết thúc",
    refusal_running_elsewhere: "trận đấu vẫn đang diễn ra trên một máy chủ khác; bản ghi sẽ có khi trận kết thúc",
    refusal_no_record: "trận này không có bản ghi (máy chủ đã dừng trước khi lưu bản ghi đầu tiên)",
    refusal_over: "trận đấu đã kết thúc", refusal_no_events: "không có sự kiện nào được lưu cho trận này",
    refusal_shutting_down: "máy chủ đang tắt",
    refusal_standings_unavailable: "hiện chưa tính được bảng xếp hạng; hãy thử lại sau",
    refusal_damaged: "bản ghi đã lưu của trận này bị hỏng hoặc đã bị sửa; người vận hành máy chủ đã được báo",
    refusal_internal: "lỗi nội bộ của máy chủ",
    wait_not_connected: "bot “{bot}” chưa kết nối",
    wait_not_frozen_version: "bot “{bot}” không kết nối bằng phiên bản đã cố định khi giải bắt đầu, “{version}”",
    wait_not_playing_ruleset: "bot “{bot}” không chơi luật {ruleset}",
    wait_draining: "bot “{bot}” đang ngừng nhận trận: nó chơi nốt các trận đang diễn ra và không nhận trận mới",
    wait_busy: "bot “{bot}” đang bận ở các trận khác", wait_back: "bot “{bot}” đã quay lại: ghế của nó lại được chờ",
    wait_shutting_down: "máy chủ đang tắt",
    wait_not_seated: "chưa thể xếp chỗ cho các bot (nhật ký của máy chủ ghi lý do)",
    waited_for_seats: "đã chờ ghế {s} giây: {reason}",
    kept_play: "Chưa kết nối: {what} sẽ được đánh ngay khi kết nối trở lại.",
    kept_pass: "Chưa kết nối: {what} sẽ được chuyền ngay khi kết nối trở lại.",
    kept_moon: "Chưa kết nối: lựa chọn của bạn ({what}) sẽ được gửi ngay khi kết nối trở lại.",
    unsent_play: "Không gửi: {what} là cho một lượt đã qua (máy chủ đã quyết định).",
    unsent_pass: "Không gửi: việc chuyền {what} là cho một lượt đã qua (máy chủ đã quyết định).",
    unsent_moon: "Không gửi: lựa chọn của bạn ({what}) là cho một lượt đã qua (máy chủ đã quyết định).",
    clock_low_pass: "Còn {s} giây để chuyền bài.", clock_low_play: "Còn {s} giây để đánh bài.",
    clock_low_moon: "Còn {s} giây để chọn.",
    seats_not_free: "{reason} (ghế chưa trống: {why})",
  },
};

export const LANGUAGES = { en: "English", id: "Bahasa Indonesia", vi: "Tiếng Việt" };

const POSITIONS = {
  en: { south: "South", south_west: "South-West", west: "West", north_west: "North-West", north: "North",
        north_east: "North-East", east: "East", south_east: "South-East" },
  id: { south: "Selatan", south_west: "Barat Daya", west: "Barat", north_west: "Barat Laut", north: "Utara",
        north_east: "Timur Laut", east: "Timur", south_east: "Tenggara" },
  vi: { south: "Nam", south_west: "Tây Nam", west: "Tây", north_west: "Tây Bắc", north: "Bắc",
        north_east: "Đông Bắc", east: "Đông", south_east: "Đông Nam" },
};

const POSITIONS_SHORT = {
  en: { south: "S", south_west: "SW", west: "W", north_west: "NW", north: "N", north_east: "NE", east: "E", south_east: "SE" },
  id: { south: "S", south_west: "BD", west: "B", north_west: "BL", north: "U", north_east: "TL", east: "T", south_east: "TG" },
  vi: { south: "N", south_west: "TN", west: "T", north_west: "TB", north: "B", north_east: "ĐB", east: "Đ", south_east: "ĐN" },
};

const RANKS = {
  en: { 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine", T: "Ten",
        J: "Jack", Q: "Queen", K: "King", A: "Ace" },
  id: { 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", T: "10", J: "Jack", Q: "Queen", K: "King", A: "As" },
  vi: { 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", T: "10", J: "J", Q: "Q", K: "K", A: "A" },
};
const SUITS = {
  en: { C: "clubs", D: "diamonds", H: "hearts", S: "spades" },
  id: { C: "keriting", D: "wajik", H: "hati", S: "sekop" },
  vi: { C: "chuồn", D: "rô", H: "cơ", S: "bích" },
};

// The language the page's address names (?lang=xx), if any. It is the page's, and every
// link to this site's pages that the page shows keeps it (pageHref), as most sites do: a
// link shared in Vietnamese leads on in Vietnamese. It is not saved: a page opened from such
// a link leaves the person's saved choice (the menu's) as it was. The menu's choice is saved,
// and on a page whose address names a language it goes into the address too (and so into
// its links), or a reload would bring back the language of the address.
let addressed = addressLanguage();
let lang = pickLanguage();
const listeners = new Set();

function addressLanguage() {
  const asked = new URLSearchParams(location.search).get("lang");
  return asked && STRINGS[asked] ? asked : null;
}

function pickLanguage() {
  const stored = (() => { try { return localStorage.getItem("lang"); } catch { return null; } })();
  for (const candidate of [addressed, stored, ...(navigator.languages || []).map((l) => l.slice(0, 2))]) {
    if (candidate && STRINGS[candidate]) return candidate;
  }
  return "en";
}

export function language() { return lang; }

// `href` as a link of this page: with ?lang= where the page's address names a language and
// `href` is a page of this site (not its API or files); else as it is.
export function pageHref(href) {
  if (!addressed) return href;
  const url = new URL(href, location.href);
  if (url.origin !== location.origin || /^\/(api|static)\//.test(url.pathname)) return href;
  url.searchParams.set("lang", addressed);
  return `${url.pathname}${url.search}${url.hash}`;
}

export function setLanguage(next) {
  if (!STRINGS[next] || next === lang) return;
  lang = next;
  try { localStorage.setItem("lang", next); } catch { /* private mode */ }
  document.documentElement.lang = next;
  if (addressed) {
    addressed = next;
    history.replaceState(history.state, "", pageHref(location.href));
    // The links the page does not draw again keep the language too.
    for (const link of document.querySelectorAll("a[href]")) link.setAttribute("href", pageHref(link.getAttribute("href")));
  }
  for (const listener of listeners) listener(next);
}

export function onLanguage(listener) { listeners.add(listener); }

// A reason of the server's fixed set, by its key (a refusal's code, a match's end, a card's
// rule, why a tournament's table waits), in this language; `fallback`, the server's own words, in English (they are English,
// and the most precise) and for any reason this language has no key for: a reason is never
// translated by guessing at its words.
export function saidAs(key, params, fallback) {
  return key && lang !== "en" && key in STRINGS[lang] ? t(key, params) : fallback;
}

export function t(key, params = {}) {
  // "{n} deals" has a singular in English ("1 deal"): the key with "_one", where there is one.
  const one = params.n === 1 ? STRINGS[lang][`${key}_one`] : undefined;
  const text = one ?? STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

// "QS" -> "Queen of spades" (en), "Queen sekop" (id), "Q bích" (vi): what a screen reader says.
export function cardLabel(code) {
  const rank = RANKS[lang][code.slice(0, -1)] ?? code.slice(0, -1);
  const suit = SUITS[lang][code.slice(-1)] ?? code.slice(-1);
  return lang === "en" ? `${rank} of ${suit}` : `${rank} ${suit}`;
}

// "C" -> "clubs" (en), "keriting" (id), "chuồn" (vi).
export function suitName(suit) { return SUITS[lang][suit] ?? suit; }

export function positionName(position) { return POSITIONS[lang][position] ?? position; }
export function positionShort(position) { return POSITIONS_SHORT[lang][position] ?? position; }

document.documentElement.lang = lang;
