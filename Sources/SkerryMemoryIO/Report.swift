import Foundation

/// One variant's results.
struct VariantResult {
    let name: String
    let samples: [Sample]
    let peakResidentBytes: Int

    var rowsRead: Int { samples.reduce(0) { $0 + $1.rowsRead } }
    var statements: Int { samples.reduce(0) { $0 + $1.statements } }
    var seconds: Double { samples.reduce(0) { $0 + $1.seconds } }
}

/// The samples as CSV: one line per perform.
func samplesCSV(_ samples: [Sample]) -> String {
    "perform,resident_bytes,rows_read,statements,seconds\n"
        + samples.map { "\($0.perform),\($0.residentBytes),\($0.rowsRead),\($0.statements),\(String(format: "%.6f", $0.seconds))" }
        .joined(separator: "\n") + "\n"
}

/// Samples from CSV made by ``samplesCSV(_:)``.
func parseSamples(_ text: String) -> [Sample] {
    text.split(separator: "\n").dropFirst().compactMap { line in
        let fields = line.split(separator: ",").map(String.init)
        guard fields.count == 5, let perform = Int(fields[0]), let resident = Int(fields[1]), let rows = Int(fields[2]),
              let statements = Int(fields[3]), let seconds = Double(fields[4]) else { return nil }
        return Sample(perform: perform, residentBytes: resident, rowsRead: rows, statements: statements, seconds: seconds)
    }
}

/// Both variants as one CSV: a line per variant and perform.
func combinedCSV(_ results: [VariantResult]) -> String {
    "variant,perform,resident_bytes,rows_read,statements,seconds\n" + results.flatMap { result in
        result.samples.map { "\(result.name),\($0.perform),\($0.residentBytes),\($0.rowsRead),\($0.statements),\(String(format: "%.6f", $0.seconds))" }
    }.joined(separator: "\n") + "\n"
}

/// The summary table.
func table(_ results: [VariantResult]) -> String {
    func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
    var lines = ["variant                      peak resident   rows read   statements   wall time"]
    for result in results {
        lines.append(result.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                     + megabytes(result.peakResidentBytes).leftPadded(15)
                     + String(result.rowsRead).leftPadded(12)
                     + String(result.statements).leftPadded(13)
                     + String(format: "%10.2fs", result.seconds))
    }
    return lines.joined(separator: "\n")
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

/// An SVG chart: resident memory (top) and rows read per perform (bottom) over the performs,
/// both variants on each.
func chartSVG(_ results: [VariantResult], title: String) -> String {
    let width = 900.0, panelHeight = 260.0, left = 70.0, right = 20.0, top = 50.0, gap = 60.0
    let colors = ["#1f77b4", "#d62728"]
    let performs = Double(max(1, results.map(\.samples.count).max() ?? 1))
    func x(_ perform: Int) -> Double { left + (width - left - right) * Double(perform) / max(1, performs - 1) }
    var svg = """
    <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(top + 2 * panelHeight + gap + 60))" font-family="sans-serif" font-size="12">
    <rect width="100%" height="100%" fill="white"/>
    <text x="\(left)" y="25" font-size="15">\(title)</text>

    """
    func panel(_ index: Int, _ label: String, _ value: (Sample) -> Double, _ format: (Double) -> String) {
        let y0 = top + Double(index) * (panelHeight + gap)
        let maximum = max(1, results.flatMap(\.samples).map(value).max() ?? 1) * 1.05
        func y(_ v: Double) -> Double { y0 + panelHeight - panelHeight * v / maximum }
        svg += "<text x=\"\(left)\" y=\"\(y0 - 8)\">\(label)</text>\n"
        svg += "<line x1=\"\(left)\" y1=\"\(y0 + panelHeight)\" x2=\"\(width - right)\" y2=\"\(y0 + panelHeight)\" stroke=\"#888\"/>\n"
        svg += "<line x1=\"\(left)\" y1=\"\(y0)\" x2=\"\(left)\" y2=\"\(y0 + panelHeight)\" stroke=\"#888\"/>\n"
        for tick in 0...4 {
            let v = maximum * Double(tick) / 4
            svg += "<text x=\"\(left - 6)\" y=\"\(y(v) + 4)\" text-anchor=\"end\">\(format(v))</text>\n"
            svg += "<line x1=\"\(left)\" y1=\"\(y(v))\" x2=\"\(width - right)\" y2=\"\(y(v))\" stroke=\"#eee\"/>\n"
        }
        for (position, result) in results.enumerated() {
            let points = result.samples.map { "\(x($0.perform)),\(y(value($0)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(colors[position % colors.count])\" stroke-width=\"1.5\" points=\"\(points)\"/>\n"
        }
    }
    panel(0, "resident memory", { Double($0.residentBytes) / 1_048_576 }, { String(format: "%.0f MB", $0) })
    panel(1, "rows read from the store, per perform", { Double($0.rowsRead) }, { String(format: "%.0f", $0) })
    let axisY = top + 2 * panelHeight + gap + 20
    svg += "<text x=\"\((width + left) / 2)\" y=\"\(axisY)\" text-anchor=\"middle\">perform (1 … \(Int(performs)))</text>\n"
    for (position, result) in results.enumerated() {
        let legendX = left + Double(position) * 260
        svg += "<rect x=\"\(legendX)\" y=\"\(axisY + 15)\" width=\"14\" height=\"4\" fill=\"\(colors[position % colors.count])\"/>"
        svg += "<text x=\"\(legendX + 20)\" y=\"\(axisY + 21)\">\(result.name)</text>\n"
    }
    return svg + "</svg>\n"
}
